/**
 * How long a request waited on its backend: its calls of the `Backend` (the mapping and the
 * upstream calls it makes, cached and coalesced reads included) or of a forwarder, both timed
 * where the routes call them (timedBackend below, src/http/forwarding.ts). What separates
 * the gateway's own share of an answer's time from the backend's
 * (`gateway_http_request_own_duration_seconds`). Calls in flight together count once: the wait
 * runs from the first one's start to the last one's end.
 */
import type { Backend, CallContext } from './backend.js';

const clock = (): number => performance.now();

export class BackendWait {
  /** `now`: milliseconds on a monotonic clock (tests pass their own). */
  constructor(private readonly now: () => number = clock) {}

  private inFlight = 0;
  private since = 0;
  private waitedMs = 0;

  /** Counts `answer` from now until it settles; returns it as it is. */
  on<T>(answer: Promise<T>): Promise<T> {
    if (this.inFlight++ === 0) this.since = this.now();
    // A branch of its own that holds nothing of the answer; the caller still gets (and handles) `answer`.
    answer.then(this.end, this.end);
    return answer;
  }

  private readonly end = (): void => {
    if (--this.inFlight === 0) this.waitedMs += this.now() - this.since;
  };

  /** Milliseconds waited so far; calls still in flight count up to now. */
  ms(): number {
    return this.inFlight > 0 ? this.waitedMs + this.now() - this.since : this.waitedMs;
  }
}

/** The Backend methods a request calls, each with the request's context last. */
const REQUEST_METHODS = [
  'getAccount', 'listProducts', 'getProduct', 'placeOrder', 'findOrderByIdempotencyKey', 'getOrder', 'listServices',
  'getService', 'getCredentials', 'runServiceAction', 'getBalance', 'listInvoices', 'getInvoiceDocument',
] as const satisfies ReadonlyArray<keyof Backend>;

type RequestMethod = (...args: unknown[]) => Promise<unknown>;

/**
 * The backend as the routes see it: each request method's call is timed on the wait its context
 * carries (none: not timed). Made once per app; everything else is the backend's own.
 */
export function timedBackend(backend: Backend): Backend {
  const timed = Object.create(backend) as Record<(typeof REQUEST_METHODS)[number], RequestMethod>;
  for (const name of REQUEST_METHODS) {
    const method = backend[name] as RequestMethod;
    timed[name] = (...args) => {
      const answer = method.apply(backend, args);
      return (args.at(-1) as CallContext | undefined)?.wait?.on(answer) ?? answer;
    };
  }
  return timed as unknown as Backend;
}
