/**
 * The one narrow road from the mapping to FOSSBilling: `call(method, params)` answers the decoded
 * `result` of `POST /api/admin/<module>/<method>`, or throws a BackendError. The default
 * implementation is FOSSBilling's protocol on the shared upstream client (src/upstream: deadline,
 * size cap, "was it sent", retry, coalescing, cache, circuit breaker); tests inject their own
 * `call`. FOSSBilling's own words never reach `detail`; they go to `operatorMessage`, redacted.
 */
import { BackendError } from '../../src/backend/backend.js';
import { DETAIL, excerpt, gatewayTimeoutAnswer, isPlainObject, overloadAnswer, parseJsonBody, redactor, unreadableAnswer, upstreamRetryAfterMs } from '../../src/upstream/answers.js';
import { createUpstreamClient, type UpstreamCallContext, type UpstreamProtocol } from '../../src/upstream/client.js';
import type { Exchange } from '../../src/upstream/exchange.js';
import type { UpstreamAction } from '../../src/upstream/policy.js';
import { upstreamClientOptions, type UpstreamWiring } from '../../src/upstream/settings.js';
import type { FossbillingConfig } from './config.js';
import { declareMethods, type FossbillingMethod, PROBE } from './methods.js';

export type FossbillingParams = Readonly<Record<string, unknown>>;
/** `context`: what the call is made for (the request's trace); none for the mapping's own calls. */
export type FossbillingCall = (method: FossbillingMethod, params: FossbillingParams, context?: UpstreamCallContext) => Promise<unknown>;

/**
 * FOSSBilling answered with `error: { message, code }`. The mapping classifies `code` (and, where
 * FOSSBilling gives only the default code 9999, the message); left unclassified, it is an upstream error.
 */
export class FossbillingError extends BackendError {
  readonly code: number | string;
  readonly upstreamMessage: string;

  constructor(code: number | string, upstreamMessage: string, operatorMessage: string) {
    super('upstream_error', DETAIL.business, { operatorMessage });
    this.name = 'FossbillingError';
    this.code = code;
    this.upstreamMessage = upstreamMessage;
  }
}

/**
 * FOSSBilling refused the gateway itself (authentication, IP, referrer, staff permission): `code`
 * says which. Each is decided before the method runs (Api/Controller/Client.php, the staff
 * permission check at the method's start), so a write refused so did not run: its Idempotency-Key
 * is free for the retry once the token or the permission is fixed.
 */
export class FossbillingRefusal extends BackendError {
  readonly code: number;

  constructor(code: number, operatorMessage: string) {
    super('upstream_error', DETAIL.refused, { operatorMessage, notRun: true });
    this.name = 'FossbillingRefusal';
    this.code = code;
  }
}

/**
 * Token login, IP allow-list and referrer failures (src/modules/Api/Controller/Client.php). Not held
 * as WHMCS's failed logins are (credential-hold.ts): FOSSBilling keeps no count of refused tokens
 * and bans nothing for them. Its only limit before the token is checked, the per-IP bucket
 * `api_authenticated_ip` (Security/RateLimiter.php; 0.6 and 0.7: a delay per call over the rate),
 * takes one token for every call, refused or answered alike, so a refusal brings no block nearer
 * than an answered call does; a hold would only delay the recovery once the token is fixed.
 */
const AUTH_CODES: ReadonlySet<number> = new Set([201, 202, 203, 204, 205, 206, 1002, 1004]);

/** The error envelope, by the codes of src/library/FOSSBilling/Http/ApiResponseFactory.php. */
function envelopeError(method: string, error: unknown, headers: Exchange['headers'], redact: (text: string) => string): BackendError {
  const fields = isPlainObject(error) ? error : {};
  const code = typeof fields.code === 'number' || typeof fields.code === 'string' ? fields.code : 9999;
  const message = redact(typeof fields.message === 'string' ? fields.message : '');
  const operatorMessage = redact(`FOSSBilling ${method}: error ${code}: ${message}`);
  const numeric = Number(code);
  if (AUTH_CODES.has(numeric)) {
    return new FossbillingRefusal(numeric, `${operatorMessage} (check the API token, its staff member's status and FOSSBilling's API IP allow-list)`);
  }
  if (numeric === 403) {
    // A staff permission the token's owner lacks (src/modules/Staff/Service.php): configuration, not the client's fault.
    return new FossbillingRefusal(numeric, `${operatorMessage} (give the API token's staff member this permission)`);
  }
  if (numeric === 429) {
    const wait = upstreamRetryAfterMs(headers['retry-after']);
    return new BackendError('unavailable', 'The billing system is busy; try again later.', { operatorMessage, ...(wait === undefined ? {} : { retryAfterMs: wait }) });
  }
  // 503: an update is being finalised; the admin API is closed meanwhile.
  if (numeric === 503) {
    const wait = upstreamRetryAfterMs(headers['retry-after']);
    return new BackendError('unavailable', 'The billing system is not available at the moment.', { operatorMessage, ...(wait === undefined ? {} : { retryAfterMs: wait }) });
  }
  // Anything else is FOSSBilling refusing the call: nothing was done.
  return new FossbillingError(code, message, operatorMessage);
}

export function fossbillingProtocol(config: FossbillingConfig): UpstreamProtocol<FossbillingMethod, FossbillingParams, unknown> {
  const prefix = `${new URL(config.url).pathname.replace(/\/+$/, '')}/api/admin/`;
  const authorization = `Basic ${Buffer.from(`admin:${config.apiToken}`).toString('base64')}`;
  const redact = redactor([config.apiToken, authorization.slice(6)]);

  /**
   * FOSSBilling translates its error messages into the request's locale (FOSSBilling/i18n.php
   * getActiveLocale: the locale cookie, then Accept-Language, then the install's default), and the
   * mapping's rules match some by their English text ("Order Not Found"): English is asked for, so
   * that a German install's refusal is still a 404 or 409, not a 502. `BBLANG` for 0.6 and 0.7.
   */
  const headers = {
    authorization,
    'content-type': 'application/json',
    accept: 'application/json',
    // undici decodes no content coding, and without Accept-Encoding any coding is acceptable (RFC 9110).
    'accept-encoding': 'identity',
    'accept-language': 'en-US',
    cookie: 'fossbilling_locale=en_US; BBLANG=en_US',
  };

  return {
    label: 'FOSSBilling',
    actions: declareMethods(config),
    probe: PROBE,
    probeParams: {},
    redact,
    request: (action, params) => ({
      method: 'POST',
      // FOSSBilling 0.6 and 0.7 read `page` from the query string only (Box/Pagination.php `$_GET['page']`,
      // FOSSBilling/Pagination.php `$request->query`); 0.8 and later from the body. Sent in both.
      path: `${prefix}${action.name}${typeof params.page === 'number' ? `?page=${params.page}` : ''}`,
      headers,
      body: JSON.stringify(params),
    }),
    callKey: (action, params) => `${action.name}?${JSON.stringify(params)}`,
    read(action: UpstreamAction<FossbillingMethod>, answer: Exchange): unknown {
      const parsed = parseJsonBody(answer.body);
      // Errors come inside HTTP 200 mostly, and with 400/401/403/404/429/503 for some codes: the envelope decides.
      // Never with another 5xx: an `error` there is a proxy's or a fatal error's, and a write may have run.
      const envelope = answer.statusCode < 500 || answer.statusCode === 503;
      if (envelope && isPlainObject(parsed) && 'error' in parsed && parsed.error !== null) throw envelopeError(action.name, parsed.error, answer.headers, redact);
      if (answer.statusCode < 200 || answer.statusCode > 299) {
        const why = `HTTP ${answer.statusCode}: ${excerpt(answer.body, redact)}`;
        // Without FOSSBilling's envelope: a proxy or web server in front turned the call away.
        if (answer.statusCode === 429 || answer.statusCode === 503) throw overloadAnswer('FOSSBilling', action, answer.statusCode, answer.headers, why, redact);
        if (answer.statusCode === 504) throw gatewayTimeoutAnswer('FOSSBilling', action, why, redact);
        // A 5xx can come from a PHP fatal error halfway through a write.
        throw unreadableAnswer('FOSSBilling', action, why, redact, action.safety === 'write' && answer.statusCode >= 500);
      }
      if (!isPlainObject(parsed) || !('result' in parsed)) throw unreadableAnswer('FOSSBilling', action, `not an API envelope: ${excerpt(answer.body, redact)}`, redact);
      return parsed.result;
    },
  };
}

export type TransportOptions = UpstreamWiring;

export interface FossbillingTransport {
  call: FossbillingCall;
  /** A result of an unexpected shape: not kept in the cache (UpstreamClient.reject). */
  reject(method: FossbillingMethod, params: FossbillingParams, result: unknown): void;
  close(): Promise<void>;
}

export function createFossbillingTransport(config: FossbillingConfig, options: TransportOptions = {}): FossbillingTransport {
  const client = createUpstreamClient(fossbillingProtocol(config), upstreamClientOptions(config, options));
  return {
    call: (method, params, context) => client.call(method, params, context),
    reject: (method, params, result) => client.reject(method, params, result),
    close: () => client.close(),
  };
}
