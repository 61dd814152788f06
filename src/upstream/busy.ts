/**
 * The bound on calls waiting for a connection to the upstream, shared by the mapped backends' client
 * (client.ts) and the v1 passthrough's forwarder: past it a call is refused at once, unsent.
 */
import { BackendError } from '../backend/backend.js';

/**
 * Calls that may wait for a free connection, per connection of the pool: the last of them is sent
 * after about four of the upstream's answer times, within its deadline while the upstream answers
 * in less than a fifth of it (3 s against the 15 s default). Beyond
 * them a call is refused at once (UpstreamBusyError): without a bound, a flood (a retry storm, a
 * slow upstream) queued thousands, each holding its client for its whole deadline before it failed
 * unsent (measured: 2 000 connections over 16, every answer 503 after 15 s), and those expiries
 * opened the breaker against an upstream that was answering.
 */
export const WAITING_PER_CONNECTION = 4;

/** Retry-After hint for a call refused because the pool's queue is full: its calls take about that long to move. */
const BUSY_RETRY_AFTER_MS = 1_000;

/**
 * A call refused because as many calls as the pool may queue already wait for a connection: nothing
 * was sent (a write's outcome is known: not run). Not a sign that the upstream is down: the breaker
 * does not hear of it. Also what a health ping gets that would have waited for a connection
 * (client.ts, waitForConnection).
 */
export class UpstreamBusyError extends BackendError {
  constructor() {
    super('unavailable', 'The billing system is busy; too many calls are waiting for it.', { outcomeUnknown: false, retryAfterMs: BUSY_RETRY_AFTER_MS });
    this.name = 'UpstreamBusyError';
  }
}

/**
 * The calls a pool holds, on its connections or waiting for one: past WAITING_PER_CONNECTION waiting
 * per connection, a call is refused unsent (UpstreamBusyError).
 */
export function createWaitingBound(connections: number) {
  let inFlight = 0;
  const most = connections * (1 + WAITING_PER_CONNECTION);
  return {
    /** Every connection in use: a call now would wait for one. */
    connectionsBusy: (): boolean => inFlight >= connections,
    /** `work`, counted while it runs; past the bound `refused` is told and UpstreamBusyError thrown, nothing run. */
    async run<T>(work: () => Promise<T>, refused: () => void): Promise<T> {
      if (inFlight >= most) {
        refused();
        throw new UpstreamBusyError();
      }
      inFlight += 1;
      try {
        return await work();
      } finally {
        inFlight -= 1;
      }
    },
  };
}

/**
 * A backend's readiness ping from one probe call sent with `waitForConnection: false`: up when it is
 * answered, and when it was not sent because every connection is busy. The calls on them are being
 * answered, or the breaker would be open (the client sends nothing then): an instance under load
 * stays ready, since a balancer pulling every loaded instance at once would be an outage.
 */
export async function answersProbe(send: () => Promise<unknown>): Promise<boolean> {
  try {
    await send();
    return true;
  } catch (error) {
    return error instanceof UpstreamBusyError;
  }
}
