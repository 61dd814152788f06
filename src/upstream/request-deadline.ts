/**
 * The request's own deadline (`requestDeadlineMs`, counted from its arrival) over the deadlines of
 * the upstream calls it makes: each call gets what is left of it, at most its own timeout, and a
 * call with too little left is not sent at all. Without it, a request whose handler makes several
 * calls one after another could take several of their timeouts: its client or load balancer had
 * given up long before, and a write could still be sent after that.
 */
import { BackendError } from '../backend/backend.js';

/**
 * The least time left for a call to be sent (or its own timeout, when shorter): with less, a read
 * would most likely be cut before its answer, and a write would end with its outcome unknown.
 */
export const LEAST_CALL_MS = 1_000;

/**
 * A call the request's deadline cut after it had waited this long for its answer (from the moment a
 * connection took it) is a timeout for the circuit breaker, as its own timeout would be; one cut
 * sooner says nothing. A request's deadline is the operator's `requestDeadlineMs` (no client can
 * shorten it), so a call is cut sooner only when its request spent its time before it (gates, earlier
 * calls, a wait for a connection): sent with little left, its cut is not the upstream's. But with
 * `requestDeadlineMs` below every call's own timeout, the own timeout is never reached: without this,
 * an upstream that hangs would never open the breaker, and every request would wait its whole
 * deadline. Below the least `requestDeadlineMs` (2 s), so that a call sent as its request starts can
 * always reach it; above LEAST_CALL_MS (the least a call is sent with), so that one sent with little
 * more left never does.
 */
export const SLOW_CUT_MS = 1_500;

/** How long a client should wait before it tries again: the backend was slow, not down. */
const RETRY_AFTER_MS = 5_000;

/**
 * The request's deadline came, or was too close, before a call was sent, or while a read waited:
 * 504. A write refused so is `notRun`: its Idempotency-Key is free again at once. A read is not:
 * met after a write was sent, it must not free the key (the write may stand).
 */
export class RequestDeadlineReached extends BackendError {
  constructor(write: boolean) {
    super('timeout', 'The request took too long; what was not yet sent upstream was not sent.', {
      outcomeUnknown: false,
      notRun: write,
      retryAfterMs: RETRY_AFTER_MS,
    });
    this.name = 'RequestDeadlineReached';
  }
}

/** Epoch ms by which a call must be done: its own timeout, or less when the request's deadline comes first. */
export function callDeadline(ownMs: number, requestDeadline: number | undefined, now = Date.now()): number {
  const own = now + ownMs;
  return requestDeadline === undefined ? own : Math.min(own, requestDeadline);
}

/** The least time left for a call whose own timeout is `ownMs` to be sent: LEAST_CALL_MS, or its timeout when shorter. */
const leastCallMs = (ownMs: number): number => Math.min(LEAST_CALL_MS, ownMs);

/**
 * Epoch ms after which a call still waiting for a connection is dropped unsent (ExchangeRequest.sendBy):
 * when the request's deadline set the call's (`deadline`, from callDeadline), the least time a call
 * needs before it; undefined when the call's own timeout ends first (it may go out until then).
 */
export function sendByOf(ownMs: number, deadline: number, requestDeadline: number | undefined): number | undefined {
  return deadline === requestDeadline ? requestDeadline - leastCallMs(ownMs) : undefined;
}

/**
 * Throws RequestDeadlineReached when too little of the request's time is left to send a call whose
 * own timeout is `ownMs`. Checked again as a connection is handed to it (ExchangeRequest.sendBy).
 */
export function assertTimeLeft(ownMs: number, requestDeadline: number | undefined, write: boolean): void {
  if (requestDeadline !== undefined && requestDeadline - Date.now() < leastCallMs(ownMs)) throw new RequestDeadlineReached(write);
}

/**
 * `work` (a read shared with other requests: a coalesced or cached load, whose own deadline is its
 * timeout, `ownMs`) as this request waits for it: rejected with RequestDeadlineReached when its
 * deadline comes first. The load goes on for the others. With at least `ownMs` left, the load ends
 * first whatever it is: no timer is set (the usual case, a cached read on every request's path).
 */
export function within<T>(work: Promise<T>, requestDeadline: number | undefined, ownMs: number): Promise<T> {
  if (requestDeadline === undefined || requestDeadline - Date.now() >= ownMs) return work;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new RequestDeadlineReached(false)), Math.max(0, requestDeadline - Date.now()));
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
