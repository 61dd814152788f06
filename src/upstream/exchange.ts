/**
 * One HTTP exchange with an upstream over an undici dispatcher: a deadline for the whole call, a cap
 * on the answer's size, and — what a write needs to know after a failure — whether the request had
 * reached a connected socket (`sent`) before it failed.
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
    super(`response larger than ${maxBytes} bytes`);
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

/** Why an exchange failed, and whether the request had reached a connection by then. */
export class ExchangeFailure extends Error {
  readonly sent: boolean;
  readonly reason: unknown;

  constructor(sent: boolean, reason: unknown) {
    super(describeError(reason));
    this.name = 'ExchangeFailure';
    this.sent = sent;
    this.reason = reason;
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
    let sent = false;
    let settled = false;
    let controller: Dispatcher.DispatchController | undefined;
    let statusCode = 0;
    let responseHeaders: Exchange['headers'] = {};
    let size = 0;
    const chunks: Buffer[] = [];
    const tooLarge = (): ResponseTooLarge => new ResponseTooLarge(request.maxResponseBytes);

    const fail = (reason: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new ExchangeFailure(sent, reason));
    };
    const timeoutMs = Math.max(1, request.deadline - Date.now());
    const timer = setTimeout(() => {
      const current = controller;
      fail(new DeadlineExceeded());
      current?.abort(new DeadlineExceeded());
    }, timeoutMs);

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        // Gave up while it was queued: make sure it is never written.
        if (settled) started.abort(new DeadlineExceeded());
        else sent = true;
      },
      onResponseStart(started, status, headers) {
        statusCode = status;
        responseHeaders = headers;
        if (Number(headers['content-length'] ?? 0) > request.maxResponseBytes) started.abort(tooLarge());
      },
      onResponseData(started, chunk) {
        size += chunk.length;
        if (size > request.maxResponseBytes) started.abort(tooLarge());
        else chunks.push(chunk);
      },
      onResponseEnd() {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ statusCode, headers: responseHeaders, body: Buffer.concat(chunks) });
      },
      onResponseError(_controller, error) {
        fail(error);
      },
    };

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
        handler,
      );
    } catch (error) {
      fail(error);
    }
  });
}
