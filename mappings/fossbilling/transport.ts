/**
 * The one narrow road from the mapping to FOSSBilling: `call(method, params, policy)` answers the
 * decoded `result` of `POST /api/admin/<module>/<method>`, or throws a BackendError. The default
 * implementation below (undici, deadline, size cap, "was it sent", envelope decoding) is kept in
 * this file alone so that it can be swapped for the shared upstream layer without touching the
 * mapping. FOSSBilling's own words never reach `detail`; they go to `operatorMessage`, redacted.
 */
import { type Dispatcher, Pool } from 'undici';
import { BackendError } from '../../src/backend/backend.js';
import type { FossbillingConfig } from './config.js';

export interface CallPolicy {
  /** Retried once, and only when the first attempt failed before anything was sent. */
  retry: boolean;
  /** Identical concurrent calls share one request. */
  coalesce: boolean;
  /** Answers are cached this long. */
  cacheMs?: number;
  /** Deadline of the whole call. */
  timeoutMs: number;
  /** A write: a failure after sending leaves the outcome unknown. */
  write?: boolean;
}

export type FossbillingCall = (method: string, params: Record<string, unknown>, policy: CallPolicy) => Promise<unknown>;

export interface FossbillingLogger {
  warn(object: Record<string, unknown>, message: string): void;
  error(object: Record<string, unknown>, message: string): void;
}

/**
 * FOSSBilling answered with `error: { message, code }`. The mapping classifies `code` (and, where
 * FOSSBilling gives no code, the message); left unclassified, it is an upstream error.
 */
export class FossbillingError extends BackendError {
  readonly code: number | string;
  readonly upstreamMessage: string;

  constructor(code: number | string, upstreamMessage: string, operatorMessage: string, outcomeUnknown = false) {
    super('upstream_error', 'The billing system reported an error.', { operatorMessage, outcomeUnknown });
    this.name = 'FossbillingError';
    this.code = code;
    this.upstreamMessage = upstreamMessage;
  }
}

/** Larger answers are refused: no answer of the methods used comes near it. */
export const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;

/** Error codes of the token login and the IP / referrer checks (src/modules/Api/Controller/Client.php). */
const AUTH_CODES = new Set([201, 202, 203, 204, 205, 206, 1002, 1004]);

interface Exchange {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

class ExchangeFailure extends Error {
  constructor(
    readonly sent: boolean,
    readonly timedOut: boolean,
    message: string,
  ) {
    super(message);
  }
}

function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? `${code}: ${error.message}` : error.message;
}

/** One POST; `sent` turns true once the request is on a connected socket. */
function exchange(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, deadline: number): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    let sent = false;
    let settled = false;
    let controller: Dispatcher.DispatchController | undefined;
    let statusCode = 0;
    let headers: Exchange['headers'] = {};
    let size = 0;
    const chunks: Buffer[] = [];
    const fail = (timedOut: boolean, reason: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new ExchangeFailure(sent, timedOut, errorText(reason)));
    };
    const timeoutMs = Math.max(1, deadline - Date.now());
    const timer = setTimeout(() => {
      const current = controller;
      fail(true, new Error('deadline exceeded'));
      current?.abort(new Error('deadline exceeded'));
    }, timeoutMs);
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        if (settled) started.abort(new Error('deadline exceeded'));
        else sent = true;
      },
      onResponseStart(started, status, responseHeaders) {
        statusCode = status;
        headers = responseHeaders;
        if (Number(responseHeaders['content-length'] ?? 0) > MAX_RESPONSE_BYTES) started.abort(new Error('response too large'));
      },
      onResponseData(started, chunk) {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) started.abort(new Error('response too large'));
        else chunks.push(chunk);
      },
      onResponseEnd() {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ statusCode, headers, body: Buffer.concat(chunks) });
      },
      onResponseError(_controller, error) {
        const code = (error as { code?: unknown }).code;
        fail(code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT', error);
      },
    };
    try {
      dispatcher.dispatch({ ...options, headersTimeout: timeoutMs, bodyTimeout: timeoutMs }, handler);
    } catch (error) {
      fail(false, error);
    }
  });
}

function retryAfterMs(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || !/^\d{1,6}$/.test(text.trim())) return undefined;
  return Number(text.trim()) * 1000;
}

export interface TransportOptions {
  /** Replaces the transport's own Pool (tests pass a MockAgent); the caller closes it. */
  dispatcher?: Dispatcher;
  logger?: FossbillingLogger;
}

export interface FossbillingTransport {
  call: FossbillingCall;
  close(): Promise<void>;
}

export function createFossbillingTransport(config: FossbillingConfig, options: TransportOptions = {}): FossbillingTransport {
  const base = new URL(config.url);
  const prefix = `${base.pathname.replace(/\/+$/, '')}/api/admin/`;
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher: Dispatcher =
    options.dispatcher ?? new Pool(base.origin, { connections: config.connections, pipelining: 1, connectTimeout: config.connectTimeoutMs });
  const authorization = `Basic ${Buffer.from(`admin:${config.apiToken}`).toString('base64')}`;
  const redact = (text: string): string => (config.apiToken.length >= 3 ? text.split(config.apiToken).join('[redacted]') : text);
  const inFlight = new Map<string, Promise<unknown>>();
  const cache = new Map<string, { result: unknown; until: number }>();

  function decode(method: string, policy: CallPolicy, { statusCode, headers, body }: Exchange): unknown {
    const unknownOutcome = policy.write === true;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8').replace(/^\uFEFF/, ''));
    } catch {
      parsed = undefined;
    }
    const envelope = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
    if (envelope && 'error' in envelope && envelope.error !== null) {
      const error = envelope.error as { code?: unknown; message?: unknown } | undefined;
      const code = typeof error?.code === 'number' || typeof error?.code === 'string' ? error.code : 9999;
      const message = typeof error?.message === 'string' ? error.message : '';
      const numeric = Number(code);
      const operatorMessage = redact(`FOSSBilling ${method}: error ${code}: ${message}`);
      if (AUTH_CODES.has(numeric)) {
        throw new BackendError('upstream_error', 'The billing system refused the gateway.', {
          operatorMessage: `${operatorMessage} (check fossbilling.apiToken, the staff member's status and the API IP allow-list)`,
        });
      }
      if (numeric === 403) {
        // A staff permission the token's owner lacks (src/modules/Staff/Service.php): configuration, not the client's fault.
        throw new BackendError('upstream_error', 'The billing system refused the gateway.', {
          operatorMessage: `${operatorMessage} (give the API token's staff member this permission)`,
        });
      }
      if (numeric === 429) {
        const wait = retryAfterMs(headers['retry-after']);
        throw new BackendError('unavailable', 'The billing system is busy; try again later.', {
          operatorMessage,
          ...(wait === undefined ? {} : { retryAfterMs: wait }),
        });
      }
      if (numeric === 503) throw new BackendError('unavailable', 'The billing system is not available at the moment.', { operatorMessage });
      // An error envelope is FOSSBilling answering: the method refused, nothing half done.
      throw new FossbillingError(code, message, operatorMessage);
    }
    if (statusCode < 200 || statusCode > 299) {
      throw new BackendError('upstream_error', 'The billing system answered with something unreadable.', {
        operatorMessage: redact(`FOSSBilling ${method}: HTTP ${statusCode} without an error envelope`),
        outcomeUnknown: unknownOutcome && statusCode >= 500,
      });
    }
    if (!envelope || !('result' in envelope)) {
      throw new BackendError('upstream_error', 'The billing system answered with something unreadable.', {
        operatorMessage: `FOSSBilling ${method}: ${body.length} bytes that are not an API envelope`,
        outcomeUnknown: unknownOutcome,
      });
    }
    return envelope.result;
  }

  function transportError(method: string, policy: CallPolicy, failure: ExchangeFailure): BackendError {
    const operatorMessage = redact(`FOSSBilling ${method}: ${failure.message}`);
    if (!failure.sent) return new BackendError('unavailable', 'The billing system could not be reached.', { operatorMessage });
    const outcomeUnknown = policy.write === true;
    if (failure.timedOut) return new BackendError('timeout', 'The billing system did not answer in time.', { operatorMessage, outcomeUnknown });
    return new BackendError('upstream_error', 'The connection to the billing system broke.', { operatorMessage, outcomeUnknown });
  }

  async function send(method: string, params: Record<string, unknown>, policy: CallPolicy): Promise<unknown> {
    const deadline = Date.now() + policy.timeoutMs;
    const request: Dispatcher.DispatchOptions = {
      origin: base.origin,
      path: `${prefix}${method}`,
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(params),
    };
    for (let attempt = 0; ; attempt += 1) {
      try {
        return decode(method, policy, await exchange(dispatcher, request, deadline));
      } catch (error) {
        if (!(error instanceof ExchangeFailure)) throw error;
        const again = policy.retry && !error.sent && attempt === 0 && Date.now() < deadline;
        if (!again) throw transportError(method, policy, error);
        options.logger?.warn({ method, error: redact(error.message) }, 'FOSSBilling read failed before sending; retrying once');
      }
    }
  }

  const call: FossbillingCall = (method, params, policy) => {
    if (policy.write) {
      // What was read before may be out of date now.
      cache.clear();
      return send(method, params, policy);
    }
    const key = `${method}?${JSON.stringify(params)}`;
    const cached = cache.get(key);
    if (cached && cached.until > Date.now()) return Promise.resolve(cached.result);
    if (!policy.coalesce) return send(method, params, policy);
    const existing = inFlight.get(key);
    if (existing) return existing;
    const flight = send(method, params, policy)
      .then((result) => {
        if (policy.cacheMs !== undefined) cache.set(key, { result, until: Date.now() + policy.cacheMs });
        return result;
      })
      .finally(() => inFlight.delete(key));
    inFlight.set(key, flight);
    return flight;
  };

  return {
    call,
    close: async () => {
      cache.clear();
      if (ownsDispatcher) await dispatcher.close();
    },
  };
}
