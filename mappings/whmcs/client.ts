/**
 * The WHMCS API client: form-encoded POSTs to `<url>/includes/api.php` over an undici Pool, with the
 * per-action policy of actions.ts enforced here (deadline, retry, coalescing, caching). Every failure
 * leaves as a BackendError whose `detail` is generic; WHMCS's own words go to `operatorMessage`,
 * with the credentials redacted. A circuit breaker (breaker.ts) makes calls fail fast while WHMCS is
 * down or overloaded.
 */
import { LRUCache } from 'lru-cache';
import { type Dispatcher, Pool } from 'undici';
import { BackendError } from '../../src/backend/backend.js';
import { type ActionDeclaration, type ActionId, type ActionTable, declareActions } from './actions.js';
import { type BreakerLogger, type BreakerTicket, CircuitOpenError, createCircuitBreaker } from './breaker.js';
import type { WhmcsConfig } from './config.js';

export type FormScalar = string | number | boolean;
export type FormParams = Readonly<Record<string, FormScalar | readonly FormScalar[] | undefined>>;
/** A successful WHMCS answer (`result: "success"`), not yet checked against its shape. */
export type WhmcsAnswer = Readonly<Record<string, unknown>>;

export { CircuitOpenError } from './breaker.js';

/** Where the mapping logs; it is handed on to the circuit breaker, hence the breaker's shape. */
export type WhmcsLogger = BreakerLogger;

export interface WhmcsClientOptions {
  /** Replaces the client's own Pool (tests pass an undici MockAgent); the caller closes it. */
  dispatcher?: Dispatcher;
  logger?: WhmcsLogger;
  /** The circuit breaker's clock (tests inject one); call deadlines always use real time. */
  now?: () => number;
}

export interface WhmcsClient {
  readonly actions: ActionTable;
  call(action: ActionId, params?: FormParams): Promise<WhmcsAnswer>;
  close(): Promise<void>;
}

/** Larger answers are refused: no legitimate answer of the actions used comes near it. */
export const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;
/** Cached answers are served stale (while one refresh runs) up to this many TTLs old. */
const STALE_FACTOR = 10;
/**
 * Statuses that say WHMCS is down or overloaded rather than answering: a proxy in front of PHP with
 * no (or no free) PHP worker, or a rate limiter. A 500 is PHP answering (often one action's fatal
 * error), so it does not count.
 */
const OVERLOAD_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

const DETAIL = {
  refused: 'The billing system refused the gateway.',
  unreadable: 'The billing system answered with something unreadable.',
  business: 'The billing system reported an error.',
  unreachable: 'The billing system could not be reached.',
  timeout: 'The billing system did not answer in time.',
  broken: 'The connection to the billing system broke.',
} as const;

/**
 * WHMCS answered `result: "error"` (or GetInvoice's `status: "error"`). The action mapper classifies
 * `upstreamMessage`; left unclassified, this is an upstream error.
 */
export class UpstreamBusinessError extends BackendError {
  readonly upstreamMessage: string;

  constructor(upstreamMessage: string, operatorMessage: string) {
    super('upstream_error', DETAIL.business, { operatorMessage });
    this.name = 'UpstreamBusinessError';
    this.upstreamMessage = upstreamMessage;
  }
}

// ---- form encoding --------------------------------------------------------------------------

function formScalar(value: FormScalar): string {
  // PHP truthiness: the string "false" would be true.
  if (typeof value === 'boolean') return value ? '1' : '0';
  return String(value);
}

function isList(value: FormScalar | readonly FormScalar[]): value is readonly FormScalar[] {
  return Array.isArray(value);
}

/** application/x-www-form-urlencoded with PHP array syntax (`pid[0]=1`); repeated keys would keep only the last. */
export function encodeForm(params: FormParams): string {
  const pairs: string[] = [];
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    const name = encodeURIComponent(key);
    if (isList(value)) value.forEach((item, index) => pairs.push(`${name}[${index}]=${encodeURIComponent(formScalar(item))}`));
    else pairs.push(`${name}=${encodeURIComponent(formScalar(value))}`);
  }
  return pairs.join('&');
}

// ---- one HTTP exchange ----------------------------------------------------------------------

interface Exchange {
  statusCode: number;
  body: Buffer;
}

class DeadlineExceeded extends Error {
  constructor() {
    super('deadline exceeded');
    this.name = 'DeadlineExceeded';
  }
}

class ResponseTooLarge extends Error {
  constructor() {
    super(`response larger than ${MAX_RESPONSE_BYTES} bytes`);
    this.name = 'ResponseTooLarge';
  }
}

/** Why an exchange failed, and whether the request had reached a connection by then. */
class ExchangeFailure extends Error {
  readonly sent: boolean;
  readonly reason: unknown;

  constructor(sent: boolean, reason: unknown) {
    super(describeError(reason));
    this.name = 'ExchangeFailure';
    this.sent = sent;
    this.reason = reason;
  }
}

/** The `code` of a Node or undici error (ECONNREFUSED, UND_ERR_HEADERS_TIMEOUT, …). */
function errorCode(error: unknown): string | undefined {
  const code: unknown = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  return typeof code === 'string' ? code : undefined;
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = errorCode(error);
  return code === undefined ? error.message : `${code}: ${error.message}`;
}

interface ExchangeRequest {
  origin: string;
  path: string;
  body: string;
  deadline: number;
}

/**
 * Sends one POST and collects the answer. `onRequestStart` fires when the request is handed to a
 * connected socket: before it, nothing can have reached WHMCS (queued, connecting, refused).
 */
function exchange(dispatcher: Dispatcher, request: ExchangeRequest): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    let sent = false;
    let settled = false;
    let controller: Dispatcher.DispatchController | undefined;
    let statusCode = 0;
    let size = 0;
    const chunks: Buffer[] = [];

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
        if (Number(headers['content-length'] ?? 0) > MAX_RESPONSE_BYTES) started.abort(new ResponseTooLarge());
      },
      onResponseData(started, chunk) {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) started.abort(new ResponseTooLarge());
        else chunks.push(chunk);
      },
      onResponseEnd() {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ statusCode, body: Buffer.concat(chunks) });
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
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
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

// ---- the client -----------------------------------------------------------------------------

interface CachedAnswer {
  answer: WhmcsAnswer;
  freshUntil: number;
}

interface AnswerCache {
  entries: LRUCache<string, CachedAnswer>;
  /** Bumped on invalidation: a load that started before it must not store its answer. */
  generation: number;
}

function describeFailure(error: unknown): string {
  return error instanceof BackendError ? (error.operatorMessage ?? error.detail) : describeError(error);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function createWhmcsClient(config: WhmcsConfig, options: WhmcsClientOptions = {}): WhmcsClient {
  const actions = declareActions(config);
  const base = new URL(config.url);
  const origin = base.origin;
  const path = `${base.pathname.replace(/\/+$/, '')}/includes/api.php`;
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher: Dispatcher =
    options.dispatcher ?? new Pool(origin, { connections: config.connections, pipelining: 1, connectTimeout: config.connectTimeoutMs });
  const logger = options.logger;
  const breaker = createCircuitBreaker(config.circuitBreaker, { logger, now: options.now });
  /** upstream_error failures that still say WHMCS is down (see isDownSignal). */
  const downSignals = new WeakSet<BackendError>();

  const credentials = encodeForm({ identifier: config.identifier, secret: config.secret, accesskey: config.accessKey });
  const secrets = [config.identifier, config.secret, config.accessKey]
    .filter((value): value is string => value !== undefined && value.length >= 3)
    .flatMap((value) => [value, encodeURIComponent(value)]);

  /** No credential ever reaches a message, even when WHMCS (or a proxy page) echoes the request. */
  function redact(text: string): string {
    return secrets.reduce((result, secret) => result.split(secret).join('[redacted]'), text);
  }

  /** What an unreadable body looked like. JSON is never quoted: it may hold a service password. */
  function excerpt(body: Buffer): string {
    const start = body.subarray(0, 400).toString('utf8').replace(/^\uFEFF/, '').replace(/\s+/g, ' ').trim();
    if (/^[[{"]/.test(start)) return `${body.length} bytes of JSON-like text`;
    return `"${redact(start.slice(0, 200))}"`;
  }

  // Bumped after every write: reads that start later never join a flight that started before it.
  let writeEpoch = 0;
  const inFlight = new Map<string, Promise<WhmcsAnswer>>();
  const caches = new Map<ActionId, AnswerCache>();

  function coalesced(key: string, load: () => Promise<WhmcsAnswer>): Promise<WhmcsAnswer> {
    const flightKey = `${writeEpoch}\n${key}`;
    const existing = inFlight.get(flightKey);
    if (existing) return existing;
    const flight = load().finally(() => inFlight.delete(flightKey));
    inFlight.set(flightKey, flight);
    return flight;
  }

  function cacheOf(id: ActionId, ttlMs: number): AnswerCache {
    let cache = caches.get(id);
    if (!cache) {
      cache = { entries: new LRUCache({ max: 256, ttl: ttlMs * STALE_FACTOR }), generation: 0 };
      caches.set(id, cache);
    }
    return cache;
  }

  function invalidate(id: ActionId): void {
    const cache = caches.get(id);
    if (!cache) return;
    cache.generation += 1;
    cache.entries.clear();
  }

  function transportError(action: ActionDeclaration, failure: ExchangeFailure): BackendError {
    const operatorMessage = redact(`WHMCS ${action.name}: ${failure.message}`);
    if (!failure.sent) return new BackendError('unavailable', DETAIL.unreachable, { operatorMessage, cause: failure.reason });
    // Sent: a write may have run. Reads are harmless either way.
    const outcomeUnknown = action.safety === 'write';
    const code = errorCode(failure.reason);
    const timedOut =
      failure.reason instanceof DeadlineExceeded || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
    if (timedOut) return new BackendError('timeout', DETAIL.timeout, { operatorMessage, outcomeUnknown, cause: failure.reason });
    if (failure.reason instanceof ResponseTooLarge) {
      return new BackendError('upstream_error', DETAIL.unreadable, { operatorMessage, outcomeUnknown, cause: failure.reason });
    }
    // The connection broke mid-call: the server (or the proxy in front of it) is going down.
    const broken = new BackendError('upstream_error', DETAIL.broken, { operatorMessage, outcomeUnknown, cause: failure.reason });
    downSignals.add(broken);
    return broken;
  }

  /**
   * What the circuit breaker counts: WHMCS unreachable (refused, DNS, connect timeout, no free
   * connection in time), not answering in time, the connection breaking, or a proxy saying it is
   * down or overloaded. Everything else is an answer, even an error: business errors, a 403 (a
   * configuration problem, logged for the operator on every call; failing fast would hide nothing
   * and only delay recovery once it is fixed), a 500 (one action's PHP error must not stop all of
   * them), unreadable bodies.
   */
  function isDownSignal(error: unknown): error is BackendError {
    if (!(error instanceof BackendError) || error instanceof CircuitOpenError) return false;
    return error.kind === 'unavailable' || error.kind === 'timeout' || downSignals.has(error);
  }

  /** An answer we cannot read; from a write it may hide a half-done action. */
  function unreadable(action: ActionDeclaration, why: string, outcomeUnknown = action.safety === 'write'): BackendError {
    return new BackendError('upstream_error', DETAIL.unreadable, { operatorMessage: redact(`WHMCS ${action.name}: ${why}`), outcomeUnknown });
  }

  function readAnswer(action: ActionDeclaration, { statusCode, body }: Exchange): WhmcsAnswer {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8').replace(/^\uFEFF/, ''));
    } catch {
      parsed = undefined;
    }
    const message = isPlainObject(parsed) && typeof parsed.message === 'string' ? parsed.message : undefined;
    if (statusCode === 403) {
      // Credentials, IP allow-list, access key, role permissions: checked before the action runs.
      const operatorMessage = redact(`WHMCS refused the gateway: ${message ?? excerpt(body)}`);
      throw new BackendError('upstream_error', DETAIL.refused, { operatorMessage });
    }
    if (statusCode < 200 || statusCode > 299) {
      // A 5xx can come from a PHP fatal error halfway through the action.
      const error = unreadable(action, `HTTP ${statusCode}: ${message ?? excerpt(body)}`, action.safety === 'write' && statusCode >= 500);
      if (OVERLOAD_STATUSES.has(statusCode)) downSignals.add(error);
      throw error;
    }
    if (!isPlainObject(parsed)) throw unreadable(action, `not a JSON object: ${excerpt(body)}`);
    if (parsed.result === 'error' || parsed.status === 'error') {
      const upstreamMessage = message ?? '';
      throw new UpstreamBusinessError(upstreamMessage, redact(`WHMCS ${action.name} failed: ${upstreamMessage}`));
    }
    if (parsed.result !== 'success') throw unreadable(action, `no result "success": ${excerpt(body)}`);
    return parsed;
  }

  /** One call into WHMCS (with its retry), without the breaker. */
  async function attempt(action: ActionDeclaration, params: FormParams): Promise<WhmcsAnswer> {
    const body = `${encodeForm({ action: action.name, ...params, responsetype: 'json' })}&${credentials}`;
    const request = { origin, path, body, deadline: Date.now() + action.timeoutMs };
    try {
      return readAnswer(action, await exchange(dispatcher, request));
    } catch (error) {
      if (!(error instanceof ExchangeFailure)) throw error;
      if (!action.retry || error.sent || Date.now() >= request.deadline) throw transportError(action, error);
      logger?.warn({ action: action.name, error: redact(error.message) }, 'WHMCS read failed before sending; retrying once');
      try {
        return readAnswer(action, await exchange(dispatcher, request));
      } catch (second) {
        throw second instanceof ExchangeFailure ? transportError(action, second) : second;
      }
    }
  }

  /** One call admitted by the breaker, its result reported back. */
  async function tracked(ticket: BreakerTicket, action: ActionDeclaration, params: FormParams): Promise<WhmcsAnswer> {
    try {
      const answer = await attempt(action, params);
      breaker.answered(ticket);
      return answer;
    } catch (error) {
      if (isDownSignal(error)) breaker.failed(ticket, error);
      else breaker.answered(ticket);
      throw error;
    }
  }

  /** One call through the circuit breaker; throws CircuitOpenError (nothing sent) while it is open. */
  async function send(action: ActionDeclaration, params: FormParams): Promise<WhmcsAnswer> {
    let ticket = breaker.admit(action.name);
    if (ticket.trial && action.safety === 'write') {
      // A write is never the trial: against a WHMCS that still hangs, it would end with an unknown
      // outcome. The health probe goes first; the write follows only if WHMCS answered it.
      await tracked(ticket, actions.GetCurrencies, {}).catch(() => undefined);
      // Closed again, or re-opened: then this throws, and the write was never sent.
      ticket = breaker.admit(action.name);
    }
    return tracked(ticket, action, params);
  }

  async function write(id: ActionId, params: FormParams): Promise<WhmcsAnswer> {
    const action = actions[id];
    try {
      return await send(action, params);
    } finally {
      // Whatever the outcome, what was read before may be out of date now.
      writeEpoch += 1;
      for (const target of action.invalidates ?? []) invalidate(target);
    }
  }

  function cachedRead(id: ActionId, ttlMs: number, key: string, params: FormParams): Promise<WhmcsAnswer> {
    const action = actions[id];
    const cache = cacheOf(id, ttlMs);
    const entry = cache.entries.get(key);
    if (entry && entry.freshUntil > Date.now()) return Promise.resolve(entry.answer);
    const generation = cache.generation;
    const serveStale = entry !== undefined;
    const refresh = coalesced(key, async () => {
      try {
        const answer = await send(action, params);
        if (cache.generation === generation) cache.entries.set(key, { answer, freshUntil: Date.now() + ttlMs });
        return answer;
      } catch (error) {
        // While the breaker is open, every stale read would log this: its opening was logged once.
        if (serveStale && !(error instanceof CircuitOpenError)) {
          logger?.warn({ action: action.name, error: describeFailure(error) }, 'WHMCS refresh failed; serving the cached answer');
        }
        throw error;
      }
    });
    if (!entry) return refresh;
    // Its failure was logged once, above; callers get the stale answer meanwhile.
    refresh.catch(() => undefined);
    return Promise.resolve(entry.answer);
  }

  function call(id: ActionId, params: FormParams = {}): Promise<WhmcsAnswer> {
    const action = actions[id];
    if (action.safety === 'write') return write(id, params);
    const key = `${action.name}?${encodeForm(params)}`;
    if (action.cacheTtlMs !== undefined) return cachedRead(id, action.cacheTtlMs, key, params);
    if (action.coalesce) return coalesced(key, () => send(action, params));
    return send(action, params);
  }

  async function close(): Promise<void> {
    for (const cache of caches.values()) cache.entries.clear();
    if (ownsDispatcher) await dispatcher.close();
  }

  return { actions, call, close };
}
