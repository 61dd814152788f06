/**
 * A dispatcher that never sends a request whose deadline passed while it waited for a connection,
 * and abandons one in flight just after its deadline (its connection is freed for the next one).
 * For a caller that cannot hand undici a signal (@fastify/reply-from builds its requests itself):
 * the deadline, in epoch ms, travels in the DEADLINE_HEADER header, removed here before anything is
 * sent. Without it, a request answered 504 for its deadline could still go out later, once a
 * connection freed up: a write the client was told had timed out, and a queue that only grows.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import type * as Undici from 'undici';
import { DeadlineExceeded } from './exchange.js';
import { Dispatcher, WrapHandler } from './undici.js';

export const DEADLINE_HEADER = 'x-gateway-deadline';

/** A request in flight is abandoned this long after its deadline: the caller's own timer answers the client first. */
const GRACE_MS = 50;

type Handler = Undici.Dispatcher.DispatchHandler;
type Controller = Undici.Dispatcher.DispatchController;

export class DeadlineDispatcher extends Dispatcher {
  constructor(private readonly inner: Undici.Dispatcher) {
    super();
  }

  override dispatch(options: Undici.Dispatcher.DispatchOptions, handler: Handler): boolean {
    const headers = options.headers;
    const deadline = headers && !Array.isArray(headers) && typeof headers === 'object' ? Number((headers as Record<string, unknown>)[DEADLINE_HEADER]) : NaN;
    if (Number.isNaN(deadline)) return this.inner.dispatch(options, handler);
    const { [DEADLINE_HEADER]: _deadline, ...sent } = headers as Record<string, string>;
    return this.inner.dispatch({ ...options, headers: sent }, new DeadlineHandler(WrapHandler.wrap(handler), deadline));
  }

  // Closing or destroying this one does the same to the dispatcher it sends through.
  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    const closed = this.inner.close();
    if (!callback) return closed;
    void closed.then(callback, callback);
  }

  override destroy(): Promise<void>;
  override destroy(error: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(error: Error | null, callback: () => void): void;
  override destroy(first?: Error | null | (() => void), second?: () => void): Promise<void> | void {
    const callback = typeof first === 'function' ? first : second;
    const destroyed = this.inner.destroy(typeof first === 'function' ? null : (first ?? null));
    if (!callback) return destroyed;
    void destroyed.then(callback, callback);
  }
}

/** The request's own handler, with its deadline kept from the moment a connection takes it. */
class DeadlineHandler implements Handler {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly handler: Handler,
    private readonly deadline: number,
  ) {}

  onRequestStart(controller: Controller, context: unknown): void {
    this.handler.onRequestStart?.(controller, context);
    const left = this.deadline - Date.now();
    // Thrown here, before it is written: undici drops it, keeps the socket (an abort through the
    // controller would destroy it) and takes the next in the queue (exchange.ts, onRequestStart).
    if (left <= 0) throw new DeadlineExceeded();
    this.timer = setTimeout(abortAtDeadline, left + GRACE_MS, controller);
  }

  onRequestUpgrade(controller: Controller, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    clearTimeout(this.timer);
    this.handler.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }

  onResponseStart(controller: Controller, statusCode: number, headers: IncomingHttpHeaders, statusMessage?: string): void {
    this.handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Controller, chunk: Buffer): void {
    this.handler.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Controller, trailers: IncomingHttpHeaders): void {
    clearTimeout(this.timer);
    this.handler.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Controller, error: Error): void {
    clearTimeout(this.timer);
    this.handler.onResponseError?.(controller, error);
  }
}

function abortAtDeadline(controller: Controller): void {
  controller.abort(new DeadlineExceeded());
}
