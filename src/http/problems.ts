/**
 * The one place where failures become responses: every error, the framework's included, is rendered
 * as Problem+JSON (contract §2) with the request id. Nothing of a stack trace or of the upstream's
 * own words reaches the client.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BackendError, type BackendErrorKind } from '../backend/backend.js';
import { ApiError, problemDocument, type Reason } from '../errors.js';
import { StoreUnavailableError } from '../stores/types.js';
import { CircuitOpenError } from '../upstream/breaker.js';
import { UpstreamBusyError } from '../upstream/busy.js';
import { CredentialHoldError } from '../upstream/credential-hold.js';
import { createRepeatedLog, type RepeatedLog } from '../repeated-log.js';
import type { AuditLog } from '../audit.js';
import { auditFailure, isAudited } from './audited.js';

const BACKEND_REASONS: Record<BackendErrorKind, Reason> = {
  not_found: 'not_found',
  conflict: 'action_not_allowed',
  validation: 'validation_failed',
  upstream_error: 'upstream_error',
  unavailable: 'upstream_unavailable',
  timeout: 'upstream_timeout',
  misconfigured: 'backend_misconfigured',
};

const GENERIC_DETAILS: Partial<Record<Reason, string>> = {
  upstream_error: 'The billing backend answered with an error.',
  upstream_unavailable: 'The billing backend is unreachable; retry shortly.',
  upstream_timeout: 'The billing backend did not answer in time.',
};

/** Retry-After in seconds: the backend's own hint when it has one (an open circuit breaker), else 5. */
function retryAfterSeconds(error: BackendError): string {
  return String(error.retryAfterMs === undefined ? 5 : Math.max(1, Math.ceil(error.retryAfterMs / 1000)));
}

/** The Problem a backend failure is answered with (also what a `service.action.failed` event reports). */
export function fromBackend(error: BackendError): ApiError {
  const reason = BACKEND_REASONS[error.kind];
  // A mapping writes `detail` for clients, but server-side failures still get one fixed sentence each.
  const detail = GENERIC_DETAILS[reason] ?? error.detail;
  // A timeout with a hint: the request's deadline came before anything more was sent (request-deadline.ts).
  const retries = reason === 'upstream_unavailable' || reason === 'backend_misconfigured' || (reason === 'upstream_timeout' && error.retryAfterMs !== undefined);
  const headers = retries ? { 'retry-after': retryAfterSeconds(error) } : undefined;
  const errors = error.kind === 'validation' ? fieldErrors(error.detail) : undefined;
  return new ApiError(reason, detail, { cause: error, ...(headers ? { headers } : {}), ...(errors ? { errors } : {}) });
}

/** A request field a detail starts with (`product_id: …`, `config_options.4: …`), as a body pointer. */
const NAMED_FIELD = /^([a-z_]+(?:\.[A-Za-z0-9_]+)*): (.+)$/s;

/** Contract §2: a validation error points at its field, as the request's own validation does (`/config_options/4`). */
function fieldErrors(detail: string): Array<{ pointer: string; detail: string }> | undefined {
  const match = NAMED_FIELD.exec(detail);
  if (!match) return undefined;
  const pointer = (match[1] as string).split('.').map((part) => `/${part.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
  return [{ pointer, detail: match[2] as string }];
}

/** Fastify's own errors (body parsing, limits, routing) by their HTTP status. */
function fromFramework(error: FastifyError): ApiError | null {
  switch (error.statusCode) {
    case 413:
      return new ApiError('payload_too_large', 'The request body is larger than the limit.');
    case 415:
      return new ApiError('unsupported_media_type', 'Request bodies must be application/json.');
    case 400:
      return new ApiError('invalid_request', bodyProblem(error));
    case 404:
      return new ApiError('not_found', 'No such resource.');
    default:
      return null;
  }
}

function bodyProblem(error: FastifyError): string {
  if (error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return 'The request body is empty but declared as JSON.';
  // Fastify answers a __proto__ or constructor.prototype key with the same error as broken JSON (a SyntaxError).
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return 'The request body is not valid JSON, or holds a forbidden property name (__proto__, constructor.prototype).';
  }
  // Another 400 of the framework or a plugin (the passthrough's proxy refusing a target): not the body's.
  return 'The request could not be read as sent.';
}

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof BackendError) return fromBackend(error);
  if (error instanceof StoreUnavailableError) {
    return new ApiError('store_unavailable', 'A required store is unavailable; retry shortly.', {
      headers: { 'retry-after': '1' },
      cause: error,
    });
  }
  const framework = error as FastifyError;
  if (typeof framework?.statusCode === 'number') {
    const mapped = fromFramework(framework);
    if (mapped) return mapped;
  }
  return new ApiError('internal_error', 'An unexpected error occurred; it has been logged.', { cause: error });
}

export function sendProblem(reply: FastifyReply, error: ApiError, typeBase: string): FastifyReply {
  const requestId = reply.request.id;
  reply.request.problem = error;
  reply.header('x-request-id', requestId);
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply
    .code(error.status)
    .header('content-type', 'application/problem+json; charset=utf-8')
    .send(JSON.stringify(problemDocument(error, requestId, typeBase)));
}

/** Why a call was refused unsent, for the log: an outage's, a flood's and a credential hold's are told apart. */
function refusedBy(error: BackendError): string | undefined {
  if (error instanceof CircuitOpenError) return 'circuit_breaker';
  if (error instanceof CredentialHoldError) return 'credential_hold';
  return error instanceof UpstreamBusyError ? 'queue_full' : undefined;
}

/**
 * An upstream outage or a flood fails every request the same way: the first failure of a kind is
 * logged at once, its repeats summed up (repeated-log.ts). A write whose outcome is unknown is
 * logged each time: its request is one an operator may have to reconcile; so is a failure the
 * client is answered below 500 for (an upstream that ignored the owner filter: each is evidence).
 */
function logFailure(request: FastifyRequest, original: unknown, apiError: ApiError, repeats: RepeatedLog): void {
  if (original instanceof BackendError) {
    if (!original.operatorMessage && apiError.status < 500) return;
    const kind = { reason: apiError.reason, backend_error: original.kind, refused_by: refusedBy(original), upstream: original.operatorMessage };
    const detail = { account_id: request.caller?.account.id, outcome_unknown: original.outcomeUnknown };
    const level = original.operatorMessage ? 'error' : 'warn';
    if (original.outcomeUnknown || apiError.status < 500) request.log[level]({ ...kind, ...detail }, 'upstream failure');
    else repeats.note(level, 'upstream failure', kind, detail, request.log);
    return;
  }
  // An outage of a store, or a full PDF renderer (load shed), is not a failure of this request's own.
  if (apiError.status >= 500 && apiError.reason !== 'store_unavailable' && apiError.reason !== 'renderer_busy') {
    request.log.error({ err: original }, 'request failed');
  }
}

/** How the router matches a route's URL: its text as written, each `:param` one path segment, nothing after. */
export function routePattern(url: string): RegExp {
  return new RegExp(`^${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+')}$`);
}

interface RouteShape {
  pattern: RegExp;
  methods: Set<string>;
}

/**
 * Error handler, not-found handler and 405 detection for the whole app. On an audited route the
 * failure is audited before its problem is sent (unrouted requests belong to no endpoint).
 */
export function installProblemHandling(
  app: FastifyInstance,
  typeBase: string,
  audit: AuditLog,
): { addRoute(method: string, url: string): void } {
  const routes = new Map<string, RouteShape>();
  const repeats = createRepeatedLog(app.log);
  // Requests are over by then: what the last window counted is written before the process ends.
  app.addHook('onClose', async () => repeats.flush());

  app.setErrorHandler(async (error, request, reply) => {
    const apiError = toApiError(error);
    logFailure(request, error, apiError, repeats);
    if (isAudited(request)) await auditFailure(request, audit, apiError, repeats);
    return sendProblem(reply, apiError, typeBase);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = [...routes.values()].filter((route) => route.pattern.test(path)).flatMap((r) => [...r.methods]);
    if (allowed.length > 0) {
      const allow = [...new Set(allowed)].sort().join(', ');
      return sendProblem(
        reply,
        new ApiError('method_not_allowed', `${request.method} is not allowed here; use ${allow}.`, { headers: { allow } }),
        typeBase,
      );
    }
    return sendProblem(reply, new ApiError('not_found', 'No such resource.'), typeBase);
  });

  return {
    addRoute(method, url) {
      const shape = routes.get(url) ?? { pattern: routePattern(url), methods: new Set<string>() };
      shape.methods.add(method);
      routes.set(url, shape);
    },
  };
}
