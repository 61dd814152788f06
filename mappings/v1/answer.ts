/**
 * Reading a v1 upstream's answer. A success must be what the endpoint documents (status, media
 * type, a body its response schema accepts). A Problem+JSON document from the closed error table
 * passes through with its status, reason and detail, except where it speaks of the gateway's own
 * access (its key refused, its rate limited): that is the operator's problem, answered 502/503.
 * Anything else (an HTML page, a redirect, a body that is not the contract's) becomes one of the
 * gateway's own problems, with the upstream's words only in the operator's log line.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { BackendError, type BackendErrorKind } from '../../src/backend/backend.js';
import { ApiError, type FieldError, REASONS, type Reason } from '../../src/errors.js';
import type { Endpoint, HandlerResult } from '../../src/http/endpoint.js';
import { DETAIL, excerpt, type Redact, upstreamRetryAfterMs } from '../../src/upstream/answers.js';
import { ALL_ACTIONS } from '../../src/v1/schemas.js';
import type { Captured } from './capture.js';

export interface AnswerContext {
  endpoint: Endpoint;
  /** A POST or PUT: after it was sent, a failure may hide an effect. */
  write: boolean;
  /** The request's path parameters, as validated. */
  params: unknown;
  /** Removes this account's upstream key from the upstream's words, wherever they go (an upstream may echo it). */
  redact: Redact;
}

const PDF = 'application/pdf';

function mediaType(headers: IncomingHttpHeaders): string {
  return (headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** The answer is a Problem+JSON document (by its media type). */
function isProblemAnswer(answer: Captured): boolean {
  return mediaType(answer.headers) === 'application/problem+json';
}

/**
 * 5xx problems the upstream writes about one exchange or one feature while it serves the rest: a
 * record its backend could not give (502), a write of one account whose outcome it cannot prove, or
 * orders it holds (503). Not its backend or store gone, which fail every request.
 */
const ANSWERED_FOR_ITSELF: ReadonlySet<Reason> = new Set<Reason>(['upstream_error', 'outcome_unknown', 'backend_misconfigured']);

/**
 * The upstream is up and answered this 5xx itself (the breaker counts it as an answer). A problem
 * of the closed table, its status its reason's: the media type alone is not enough, a proxy in
 * front may word its own failures as Problem+JSON.
 */
export function isOwnAnswer(answer: Captured): boolean {
  const problem = answer.status >= 500 ? problemOf(answer) : undefined;
  return problem !== undefined && ANSWERED_FOR_ITSELF.has(problem.reason);
}

/** A detail the upstream wrote for clients, when it is plain text of a sane length. */
function cleanText(value: unknown, max = 1000): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= max && !/[\u0000-\u001f\u007f]/.test(value) ? value : undefined;
}

function label(ctx: AnswerContext): string {
  return `v1 upstream ${ctx.endpoint.operationId}`;
}

function unreadable(ctx: AnswerContext, why: string, outcomeUnknown = ctx.write, notRun = false): BackendError {
  return new BackendError('upstream_error', DETAIL.unreadable, { operatorMessage: `${label(ctx)}: ${why}`, outcomeUnknown, notRun });
}

/**
 * The headers the contract fixes for the answer (Location, Content-Disposition), made as the
 * gateway's own handler makes them: from the request and the body as validated. The upstream's own
 * headers stay behind (a Location of its own may point under its base path, or anywhere).
 */
function answerHeaders(ctx: AnswerContext, body: unknown): Record<string, string> {
  return ctx.endpoint.answerHeaders?.({ params: ctx.params, body }) ?? {};
}

function success(ctx: AnswerContext, answer: Captured): HandlerResult {
  const { endpoint } = ctx;
  const spec = endpoint.responses[answer.status];
  if (!spec) throw unreadable(ctx, `answered ${answer.status}, which ${endpoint.operationId} does not document`);
  const media = mediaType(answer.headers);
  const asked = (ctx.params as { id?: unknown } | undefined)?.id;
  if (spec.contentType === PDF) {
    if (media !== PDF || answer.body.subarray(0, 5).toString('latin1') !== '%PDF-') throw unreadable(ctx, `answered ${answer.status} without a PDF (${media || 'no content type'})`);
    // A PDF shows which record it is only in the name the contract gives it: one of another record is not passed on.
    const named = namedRecord(answer.headers);
    if (asked !== undefined && named !== undefined && named !== asked) throw unreadable(ctx, `answered ${answer.status} with the document of another record than ${String(asked)}`);
    return { status: answer.status, body: answer.body, headers: answerHeaders(ctx, answer.body) };
  }
  if (media !== 'application/json') throw unreadable(ctx, `answered ${answer.status} with ${media || 'no content type'}: ${excerpt(answer.body, ctx.redact)}`);
  let json: unknown;
  try {
    json = JSON.parse(answer.body.toString('utf8'));
  } catch {
    throw unreadable(ctx, `answered ${answer.status} with malformed JSON (${answer.body.length} bytes)`);
  }
  const parsed = spec.schema?.safeParse(json);
  if (parsed && !parsed.success) {
    // Paths and messages only: values may be a customer's data.
    const issues = parsed.error.issues.slice(0, 3).map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw unreadable(ctx, `answered ${answer.status} with a body that is not the contract's: ${issues.join('; ')}`);
  }
  const body = parsed ? parsed.data : json;
  // The record answered is the one asked for: a cache or a routing fault upstream could hand this
  // account another's record (under the account's own key, the upstream's isolation is all there is).
  if (asked !== undefined && answeredId(body) !== asked) throw unreadable(ctx, `answered ${answer.status} with another record than ${String(asked)}`);
  return { status: answer.status, body, headers: answerHeaders(ctx, body) };
}

/** The record a document names in its Content-Disposition (`invoice-<id>.pdf`, as the contract names it), if it names one. */
function namedRecord(headers: IncomingHttpHeaders): string | undefined {
  const disposition = headers['content-disposition'];
  return typeof disposition === 'string' ? /\bfilename="?invoice-([^"/\\]+)\.pdf"?/i.exec(disposition)?.[1] : undefined;
}

/** Which record an answer is: a record's own id, credentials' service, an action's service. */
function answeredId(body: unknown): unknown {
  if (typeof body !== 'object' || body === null) return undefined;
  const record = body as { id?: unknown; service_id?: unknown; service?: { id?: unknown } | null };
  return record.id ?? record.service_id ?? record.service?.id;
}

interface UpstreamProblem {
  reason: Reason;
  detail: string | undefined;
  document: Record<string, unknown>;
}

/** A Problem+JSON document of the closed table, its status matching its reason; else undefined. */
function problemOf(answer: Captured): UpstreamProblem | undefined {
  if (!isProblemAnswer(answer)) return undefined;
  let document: unknown;
  try {
    document = JSON.parse(answer.body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return undefined;
  const { reason } = document as { reason?: unknown };
  if (typeof reason !== 'string' || !Object.hasOwn(REASONS, reason)) return undefined;
  if (REASONS[reason as Reason].status !== answer.status) return undefined;
  return { reason: reason as Reason, detail: cleanText((document as { detail?: unknown }).detail), document: document as Record<string, unknown> };
}

function fieldErrors(value: unknown, redact: Redact): FieldError[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const errors = value.slice(0, 50).flatMap((item: { pointer?: unknown; detail?: unknown }) => {
    // `""` points at the body as a whole (RFC 6901), as this gateway's own validation answers.
    const pointer = item?.pointer === '' ? '' : cleanText(item?.pointer, 200);
    const detail = cleanText(item?.detail, 500);
    return pointer !== undefined && detail !== undefined && (pointer === '' || pointer.startsWith('/')) ? [{ pointer: redact(pointer), detail: redact(detail) }] : [];
  });
  return errors.length > 0 ? errors : undefined;
}

/** Problems that are about the upstream's own backends or state: this gateway says them in its own words. */
const UPSTREAM_FAILURES: Partial<Record<Reason, BackendErrorKind>> = {
  upstream_error: 'upstream_error',
  internal_error: 'upstream_error',
  upstream_unavailable: 'unavailable',
  store_unavailable: 'unavailable',
  upstream_timeout: 'timeout',
};

/** Problems the upstream can only answer when this gateway forwarded wrongly (it validated first). */
const FORWARDING_FAULTS: ReadonlySet<Reason> = new Set<Reason>([
  'method_not_allowed',
  'payload_too_large',
  'unsupported_media_type',
  'idempotency_key_missing',
  'idempotency_key_invalid',
]);

function passProblem(ctx: AnswerContext, answer: Captured, problem: UpstreamProblem): Error {
  const { reason, document } = problem;
  const detail = problem.detail === undefined ? undefined : ctx.redact(problem.detail);
  const retryAfter = upstreamRetryAfterMs(answer.headers['retry-after']);
  const said = `${answer.status} ${reason}${detail ? `: ${detail}` : ''}`;
  if (reason === 'unauthenticated' || reason === 'insufficient_scope') {
    // Refused at its door: nothing ran, and the client's retry with the same key may run once the key is fixed.
    return new BackendError('upstream_error', DETAIL.refused, {
      operatorMessage: `${label(ctx)}: the upstream refused this account's key (${said}); check upstream.v1.apiKeys and the key's scopes there`,
      notRun: true,
    });
  }
  if (reason === 'rate_limited') {
    // Which of its limits: a source-IP limit there counts every account forwarded from here.
    const policies = Array.isArray(document.violated_policies) ? document.violated_policies.filter((each) => typeof each === 'string' && /^[a-z_]{1,40}$/.test(each)) : [];
    return new BackendError('unavailable', DETAIL.unreachable, {
      operatorMessage: `${label(ctx)}: the upstream rate-limits this account's key or this gateway's address (${said}; violated: ${policies.join(', ') || 'not said'})`,
      ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }),
    });
  }
  if (reason === 'not_found') return new BackendError('not_found', detail ?? 'No such resource.');
  if (reason === 'action_not_allowed') return new BackendError('conflict', detail ?? REASONS.action_not_allowed.title);
  const failure = UPSTREAM_FAILURES[reason];
  if (failure) {
    return new BackendError(failure, DETAIL.business, {
      operatorMessage: `${label(ctx)}: ${said}`,
      // A write the upstream could not finish may still stand; its store being down means nothing ran.
      outcomeUnknown: ctx.write && reason !== 'store_unavailable',
      ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }),
    });
  }
  if (FORWARDING_FAULTS.has(reason)) return unreadable(ctx, `refused what the gateway forwarded (${said})`, false, true);
  // The client's own business: its status, reason and words, with the extensions the contract names.
  // Actions of this contract only; the route narrows them to this gateway's profile (services/actions.ts).
  const allowed = Array.isArray(document.allowed_actions) ? document.allowed_actions.filter((action) => (ALL_ACTIONS as unknown[]).includes(action)) : undefined;
  const errors = fieldErrors(document.errors, ctx.redact);
  return new ApiError(reason, detail ?? REASONS[reason].title, {
    ...(reason === 'invalid_action' && allowed ? { extensions: { allowed_actions: allowed } } : {}),
    ...(errors ? { errors } : {}),
    ...(retryAfter === undefined ? {} : { headers: { 'retry-after': String(retryAfter / 1000) } }),
  });
}

/** Any other failure status, by what it says about the upstream. */
function normalise(ctx: AnswerContext, answer: Captured): BackendError {
  const { status } = answer;
  const what = `answered ${status} (${mediaType(answer.headers) || 'no content type'}): ${excerpt(answer.body, ctx.redact)}`;
  const retryAfter = upstreamRetryAfterMs(answer.headers['retry-after']);
  if (status >= 300 && status < 400) return unreadable(ctx, `answered ${status}, a redirect, which is not followed`);
  // Not `notRun`: a page that is not the upstream's own problem was written by whatever sits in
  // front of it, and a WAF that inspects answers refuses with 403 after the write ran. Only the
  // upstream's own 401/403 problem (passProblem) proves that nothing ran.
  if (status === 401 || status === 403) return new BackendError('upstream_error', DETAIL.refused, { operatorMessage: `${label(ctx)}: refused the gateway: ${what}` });
  if (status === 429 || status === 503) {
    return new BackendError('unavailable', DETAIL.unreachable, {
      operatorMessage: `${label(ctx)}: ${what}`,
      outcomeUnknown: ctx.write && status === 503,
      ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }),
    });
  }
  if (status === 504) return new BackendError('timeout', DETAIL.timeout, { operatorMessage: `${label(ctx)}: ${what}`, outcomeUnknown: ctx.write });
  return unreadable(ctx, what, ctx.write && status >= 500);
}

/** The endpoint's answer from the upstream's, or the error to answer with instead. */
export function readAnswer(ctx: AnswerContext, answer: Captured): HandlerResult {
  if (answer.status >= 200 && answer.status < 300) return success(ctx, answer);
  const problem = answer.status >= 400 ? problemOf(answer) : undefined;
  throw problem ? passProblem(ctx, answer, problem) : normalise(ctx, answer);
}
