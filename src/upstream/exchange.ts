/**
 * One HTTP exchange with an upstream over an undici dispatcher: a deadline for the whole call, a cap
 * on the answer's size, and — what the caller needs to know after a failure — whether the request
 * had reached a connected socket (`sent`: a write may have run) and whether an answer had started
 * (`answered`: a status line came, so the upstream was working on this request) before it failed.
 */
import type { Dispatcher } from 'undici';

export interface ExchangeRequest {
  origin: string;
  path: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  headers: Record<string, string>;
  body?: string;
  /** Epoch milliseconds after which the call is abandoned. */
  deadline: number;
  /**
   * Epoch milliseconds after which a request still waiting for a connection is dropped unsent (it
   * would go out with too little time left to be answered: request-deadline.ts); none by default.
   */
  sendBy?: number | undefined;
  /**
   * Asked when a connection takes the request, which may have waited in the pool's queue since it
   * was made: an error drops it unsent, as the failure's reason (a credential hold that started
   * meanwhile: credential-hold.ts).
   */
  refuseSend?: (() => Error | undefined) | undefined;
  maxResponseBytes: number;
}

export interface Exchange {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export class DeadlineExceeded extends Error {
  constructor() {
    super('deadline exceeded');
    this.name = 'DeadlineExceeded';
  }
}

export class ResponseTooLarge extends Error {
  constructor(maxBytes: number) {
    super(`response larger than ${maxBytes} bytes (maxResponseBytes)`);
    this.name = 'ResponseTooLarge';
  }
}

/** The `code` of a Node or undici error (ECONNREFUSED, UND_ERR_HEADERS_TIMEOUT, …). */
export function errorCode(error: unknown): string | undefined {
  const code: unknown = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  return typeof code === 'string' ? code : undefined;
}

export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = errorCode(error);
  return code === undefined ? error.message : `${code}: ${error.message}`;
}

/** Why an exchange failed, whether the request had reached a connection by then, and whether an answer had started. */
export class ExchangeFailure extends Error {
  readonly sent: boolean;
  /** The status line had come (`onResponseStart`): the failure is in the answer (its body, its size, the deadline while reading it). */
  readonly answered: boolean;
  readonly reason: unknown;
  /** How long it had waited on its connection when it failed, ms (0 when never sent). */
  readonly waitedMs: number;

  constructor(sent: boolean, reason: unknown, answered: boolean, waitedMs = 0) {
    super(describeError(reason));
    this.name = 'ExchangeFailure';
    this.sent = sent;
    this.answered = answered;
    this.reason = reason;
    this.waitedMs = waitedMs;
  }

  get timedOut(): boolean {
    const code = errorCode(this.reason);
    return this.reason instanceof DeadlineExceeded || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
  }
}

/**
 * Sends one request and collects the answer. `onRequestStart` fires when the request is handed to a
 * connected socket: before it, nothing can have reached the upstream (queued, connecting, refused).
 */
export function exchange(dispatcher: Dispatcher, request: ExchangeRequest): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const timeoutMs = Math.max(1, request.deadline - Date.now());
    const pending = new PendingExchange(request.maxResponseBytes, timeoutMs, request.sendBy, request.refuseSend, resolve, reject);
    try {
      dispatcher.dispatch(
        {
          origin: request.origin,
          path: request.path,
          method: request.method,
          headers: request.headers,
          body: request.body,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        },
        pending,
      );
    } catch (error) {
      pending.fail(error);
    }
  });
}

/**
 * One exchange in flight, as undici's handler: its state in one object (an upstream waiting long
 * holds it for as long, through every young collection meanwhile), its steps as methods.
 */
class PendingExchange implements Dispatcher.DispatchHandler {
  private sent = false;
  /** When a connection took it (epoch ms). */
  private sentAt = 0;
  private answered = false;
  private settled = false;
  private controller: Dispatcher.DispatchController | undefined;
  private statusCode = 0;
  private headers: Exchange['headers'] = {};
  private size = 0;
  private readonly chunks: Buffer[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly maxResponseBytes: number,
    timeoutMs: number,
    private readonly sendBy: number | undefined,
    private readonly refuseSend: (() => Error | undefined) | undefined,
    private readonly resolve: (exchange: Exchange) => void,
    private readonly reject: (failure: ExchangeFailure) => void,
  ) {
    this.timer = setTimeout(expire, timeoutMs, this);
  }

  /** The deadline passed: the caller is answered now, and the request abandoned wherever it is. */
  expire(): void {
    const current = this.controller;
    this.fail(new DeadlineExceeded());
    current?.abort(new DeadlineExceeded());
  }

  fail(reason: unknown): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.reject(new ExchangeFailure(this.sent, reason, this.answered, this.sent ? Date.now() - this.sentAt : 0));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // Gave up while it was queued: never written. Thrown rather than aborted: undici then drops the
    // request and keeps the keep-alive socket it was handed (client-h1.js writeH1 catches a throwing
    // handler), where an abort through the controller destroys that socket.
    if (this.settled) throw new DeadlineExceeded();
    if (this.sendBy !== undefined && Date.now() > this.sendBy) {
      this.fail(new DeadlineExceeded());
      throw new DeadlineExceeded();
    }
    const refusal = this.refuseSend?.();
    if (refusal !== undefined) {
      this.fail(refusal);
      throw refusal;
    }
    this.controller = controller;
    this.sent = true;
    this.sentAt = Date.now();
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Exchange['headers']): void {
    this.answered = true;
    this.statusCode = statusCode;
    this.headers = headers;
    if (Number(headers['content-length'] ?? 0) > this.maxResponseBytes) controller.abort(new ResponseTooLarge(this.maxResponseBytes));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size > this.maxResponseBytes) controller.abort(new ResponseTooLarge(this.maxResponseBytes));
    else this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve({ statusCode: this.statusCode, headers: this.headers, body: Buffer.concat(this.chunks) });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(error);
  }
}

function expire(pending: PendingExchange): void {
  pending.expire();
}
