/**
 * A dispatcher that never sends a request whose deadline (or send-by time: ExchangeRequest.sendBy)
 * passed while it waited for a connection, abandons one in flight just after its deadline (its
 * connection is freed for the next one), and tells whether a connection took it (a write may have
 * run). For a caller that cannot hand undici a signal (@fastify/reply-from builds its requests
 * itself): the request is scheduled here first, and the DEADLINE_HEADER header names it, removed
 * before anything is sent. Without it, a request answered 504 for its deadline could still go out
 * later, once a connection freed up: a write the client was told had timed out, and a queue that
 * only grows.
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

/** A request scheduled to be sent through the dispatcher. */
export interface ScheduledRequest {
  /** The DEADLINE_HEADER value that names it. */
  readonly header: string;
  /** A connection took it: it may have reached the upstream. */
  readonly sent: boolean;
  /** When a connection took it (Date.now()); 0 while unsent. */
  readonly sentAt: number;
  /** Forgets it, should it never have been dispatched; once its exchange ended. */
  end(): void;
}

interface Schedule {
  deadline: number;
  sendBy: number;
  sent: boolean;
  sentAt: number;
}

/** What a request whose schedule ended before it was dispatched gets: dropped unsent. */
const ENDED: Schedule = { deadline: 0, sendBy: 0, sent: false, sentAt: 0 };

export class DeadlineDispatcher extends Dispatcher {
  /** Scheduled and not yet dispatched, by their header. */
  private readonly waiting = new Map<string, Schedule>();
  private scheduled = 0;

  constructor(private readonly inner: Undici.Dispatcher) {
    super();
  }

  /** A request to be abandoned at `deadline`, and not sent after `sendBy` (by default its deadline). */
  schedule(deadline: number, sendBy = deadline): ScheduledRequest {
    this.scheduled += 1;
    const header = String(this.scheduled);
    const schedule: Schedule = { deadline, sendBy, sent: false, sentAt: 0 };
    this.waiting.set(header, schedule);
    return {
      header,
      get sent() {
        return schedule.sent;
      },
      get sentAt() {
        return schedule.sentAt;
      },
      end: () => this.waiting.delete(header),
    };
  }

  override dispatch(options: Undici.Dispatcher.DispatchOptions, handler: Handler): boolean {
    const headers = options.headers;
    const header = headers && !Array.isArray(headers) && typeof headers === 'object' ? (headers as Record<string, unknown>)[DEADLINE_HEADER] : undefined;
    if (typeof header !== 'string') return this.inner.dispatch(options, handler);
    const { [DEADLINE_HEADER]: _header, ...sent } = headers as Record<string, string>;
    const schedule = this.waiting.get(header) ?? ENDED;
    this.waiting.delete(header);
    return this.inner.dispatch({ ...options, headers: sent }, new DeadlineHandler(WrapHandler.wrap(handler), schedule));
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
    private readonly schedule: Schedule,
  ) {}

  onRequestStart(controller: Controller, context: unknown): void {
    this.handler.onRequestStart?.(controller, context);
    const now = Date.now();
    // Thrown here, before it is written: undici drops it, keeps the socket (an abort through the
    // controller would destroy it) and takes the next in the queue (exchange.ts, onRequestStart).
    if (now > this.schedule.sendBy || now >= this.schedule.deadline) throw new DeadlineExceeded();
    this.schedule.sent = true;
    this.schedule.sentAt = now;
    this.timer = setTimeout(abortAtDeadline, this.schedule.deadline - now + GRACE_MS, controller);
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
