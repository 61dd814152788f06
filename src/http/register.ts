/**
 * Turns an `Endpoint` into a Fastify route with this pipeline, in order:
 * key auth → scope → key/account limits (onRequest) → Idempotency-Key present and well-formed
 * (preParsing, before the body is read) → validation (preValidation) → idempotency
 * → handler → output shaped by the response schema → audit record (routes marked `audited`; their
 * failures are audited by the error handler). The request id is set before all of it, app-wide
 * (request-gate.ts). The source IP is counted here, before any key lookup; a key this process
 * holds needs no lookup, so its source-IP and key limits are decided together, in one store call:
 * the one Redis round trip of an authenticated read.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { z } from 'zod';
import { compiled } from './compiled-schema.js';
import { ApiError, problemDocument } from '../errors.js';
import { bearerKey, isBearerScheme, sentKeyId, soleAuthorization } from '../keys/api-key.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import { rateLimitedError, rateLimitHeaders } from '../limits/rate-limiter.js';
import type { StoredResponse } from '../stores/types.js';
import type { AuthenticatedKey, AuthFailure } from '../keys/key-service.js';
import type { Caller, Endpoint, EndpointInput, EndpointScope, GatewayDeps, HandlerResult } from './endpoint.js';
import { Idempotency, type IdempotentAttempt } from './idempotency.js';
import { idempotencyKeyBeforeBody, readRequestInput, type RequestInput } from './validation.js';
import { auditAnswer } from './audited.js';
import { toApiError } from './problems.js';
import { sourceAddress } from './source-address.js';
import { BackendWait } from '../backend/wait.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | undefined;
    v1Input: RequestInput | undefined;
    /** The problem this request was answered with, for the access line. */
    problem: ApiError | undefined;
  }
  interface FastifyContextConfig {
    scope?: EndpointScope;
    /** Every request routed here is audited (see audited.ts). */
    audited?: boolean;
  }
}

export interface RegisterContext {
  deps: GatewayDeps;
  rateLimiter: RateLimiter;
  idempotency: Idempotency;
  typeBase: string;
}

/** Why a key was refused, for the access line: `missing`, `several`, `not_bearer`, or an AuthFailure. */
type RefusedBecause = AuthFailure | 'missing' | 'several' | 'not_bearer';

/**
 * The 401. The access line names why, and the key id of the key sent when it has one (never its
 * secret): a reseller's "my key stopped working" is then one search in the log.
 */
function unauthenticated(detail: string, keySent: boolean, because: RefusedBecause, key?: string): ApiError {
  const challenge = keySent ? 'Bearer realm="v1", error="invalid_token"' : 'Bearer realm="v1"';
  const keyId = key === undefined ? undefined : sentKeyId(key);
  const logged: Record<string, string> = { auth_failure: because };
  if (keyId !== undefined) logged.sent_key_id = keyId;
  return new ApiError('unauthenticated', detail, { headers: { 'www-authenticate': challenge }, logged });
}

const AUTH_FAILURES = {
  malformed: 'The API key is malformed.',
  unknown: 'The API key is not valid.',
  revoked: 'The API key has been revoked.',
  expired: 'The API key has expired.',
  account_disabled: "The API key's account is disabled.",
} as const;

/** The caller a key check found, or the 401 it earns. */
function callerOf(result: AuthenticatedKey | AuthFailure, key: string): Caller {
  if (typeof result === 'string') throw unauthenticated(AUTH_FAILURES[result], true, result, key);
  return {
    key: result.key,
    account: result.account,
    customer: { accountId: result.account.id, upstreamId: result.account.upstreamId },
  };
}

/** The key checked against the store (a key this process does not hold, or not freshly). */
async function authenticate(key: string | undefined, header: string | null | undefined, ctx: RegisterContext): Promise<Caller> {
  if (header === undefined || header === '') throw unauthenticated('An API key is required: Authorization: Bearer <key>.', false, 'missing');
  if (header === null) throw unauthenticated('Send one Authorization header; this request has several.', true, 'several');
  if (key === undefined) {
    const bearer = isBearerScheme(header);
    throw unauthenticated('The Authorization header must be "Bearer <key>".', bearer, bearer ? 'malformed' : 'not_bearer');
  }
  return callerOf(await ctx.deps.keys.authenticate(key), key);
}

/** The 403 a caller earns on this endpoint, if any. */
function scopeRefusal(endpoint: Endpoint, caller: Caller): ApiError | undefined {
  if (endpoint.scope === 'any' || endpoint.scope === 'public') return undefined;
  if (caller.key.scopes.includes(endpoint.scope)) return undefined;
  return new ApiError('insufficient_scope', `This endpoint requires the scope ${endpoint.scope}.`, {
    extensions: { required_scope: endpoint.scope },
    headers: { 'www-authenticate': `Bearer realm="v1", error="insufficient_scope", scope="${endpoint.scope}"` },
  });
}

const JSON_TYPE = 'application/json; charset=utf-8';
const PDF_TYPE = 'application/pdf';

/** Bytes travel (and are stored) as base64; everything else as JSON. */
function serialise(body: unknown): string {
  return Buffer.isBuffer(body) || body instanceof Uint8Array ? Buffer.from(body).toString('base64') : JSON.stringify(body);
}

function toStored(status: number, headers: Record<string, string> | undefined, contentType: string, body: string): StoredResponse {
  return { status, headers: headers ? { 'content-type': contentType, ...headers } : { 'content-type': contentType }, body };
}

/** The JSON of `body` as its documented schema outputs it (undocumented fields stripped). */
function shapedJson(schema: z.ZodType | undefined, body: unknown): string {
  return serialise(schema ? compiled(schema).parse(body) : body);
}

/** The response to store and send; `bytes`, for a memoised body, is its JSON encoded once. */
interface Output {
  stored: StoredResponse;
  bytes?: Buffer;
}

/**
 * The response as stored and sent: a PDF as base64, anything else as the JSON of its documented
 * schema's output. Parsing through that schema strips every field the contract does not name.
 *
 * A handler that returns the same FROZEN body object again (a cached catalog, say) gets the output
 * computed the first time: the parse, the serialisation and the encoding run once per distinct
 * object, per endpoint and status. A frozen body is taken to be deeply immutable; whatever it
 * holds, the memoised text is always a parse result, so an undocumented field can never get
 * through. Bodies that are not frozen (every body built per request) are parsed and serialised
 * every time.
 */
function outputOf(endpoint: Endpoint, result: HandlerResult, memo: Map<number, WeakMap<object, { body: string; bytes: Buffer }>>): Output {
  const spec = endpoint.responses[result.status];
  if (!spec) throw new Error(`${endpoint.operationId} answered ${result.status}, which it does not document`);
  const raw = result.body;
  if (spec.contentType === PDF_TYPE) return { stored: toStored(result.status, result.headers, PDF_TYPE, serialise(raw)) };
  if (typeof raw !== 'object' || raw === null || !Object.isFrozen(raw)) {
    return { stored: toStored(result.status, result.headers, JSON_TYPE, shapedJson(spec.schema, raw)) };
  }
  let seen = memo.get(result.status);
  let output = seen?.get(raw);
  if (output === undefined) {
    const body = shapedJson(spec.schema, raw);
    output = { body, bytes: Buffer.from(body) };
    if (!seen) memo.set(result.status, (seen = new WeakMap()));
    seen.set(raw, output);
  }
  return { stored: toStored(result.status, result.headers, JSON_TYPE, output.body), bytes: output.bytes };
}

/** What the endpoint's handler is given for the request (and, idempotent, for this attempt); `deadline` in epoch ms. */
function endpointInput(request: FastifyRequest, input: RequestInput, deadline: number, attempt?: IdempotentAttempt): EndpointInput {
  return {
    params: input.params,
    query: input.query,
    body: input.body,
    requestId: request.id,
    call: { requestId: request.id, trace: request.trace, wait: (request.backendWait ??= new BackendWait()), deadline },
    caller: request.caller as Caller,
    idempotencyKey: input.idempotencyKey,
    attempt,
    log: request.log,
    connection: request.raw.socket,
  };
}

/** The source-IP limit on its own: 429 when refused. */
export async function enforceIpLimit(rateLimiter: RateLimiter, ip: string): Promise<void> {
  const decision = await rateLimiter.hitIp(ip);
  if (!decision.allowed) throw rateLimitedError(decision, rateLimitHeaders(decision));
}

/**
 * What answers a request that passed the gates: the endpoint's handler with the app's deps, or a
 * forwarder (src/http/forwarding.ts). Its result goes through the same output, idempotency and audit.
 */
export type Answer = (input: EndpointInput, reply: FastifyReply) => Promise<HandlerResult>;

/** Puts the route on the app: `app.route` unless a forwarder mounts it its own way. */
export type Mount = (route: RouteOptions) => void;

export function registerEndpoint(
  app: FastifyInstance,
  endpoint: Endpoint,
  ctx: RegisterContext,
  answer: Answer,
  mount: Mount = (route) => app.route(route),
): void {
  const isPublic = endpoint.scope === 'public';
  /** Status → frozen body object → its JSON output (see outputOf). */
  const outputMemo = new Map<number, WeakMap<object, { body: string; bytes: Buffer }>>();

  const onRequest = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (isPublic) return;
    const header = soleAuthorization(request.raw);
    const key = bearerKey(header);
    // A key this process holds is decided at once, and its limits with the source IP's in one call.
    const held = key === undefined ? undefined : ctx.deps.keys.authenticateHeld(key);
    if (held === undefined) await enforceIpLimit(ctx.rateLimiter, sourceAddress(request));
    reply.header('cache-control', 'no-store');
    let caller: Caller;
    try {
      caller = held === undefined ? await authenticate(key, header, ctx) : callerOf(held, key as string);
    } catch (error) {
      // A refused request counts for its source IP too.
      if (held !== undefined) await enforceIpLimit(ctx.rateLimiter, sourceAddress(request));
      throw error;
    }
    // Known from here on, even if the scope refuses it (the audit names the key and account).
    request.caller = caller;
    // The scope is decided first, but a 403 is still a request the key made: it is counted, in the
    // same one call, and carries the limits' headers like every authenticated answer (contract §3).
    const refusal = scopeRefusal(endpoint, caller);
    const decision = held === undefined ? await ctx.rateLimiter.hitKey(caller.key) : await ctx.rateLimiter.hitIpAndKey(sourceAddress(request), caller.key);
    const headers = rateLimitHeaders(decision);
    reply.headers(headers);
    // In the pipeline's order: the source IP's limit, then the scope, then the key's limits.
    if (refusal && !decision.violated.includes('ip_minute')) throw refusal;
    if (!decision.allowed) throw rateLimitedError(decision, headers);
  };

  const preValidation = async (request: FastifyRequest): Promise<void> => {
    request.v1Input = readRequestInput(endpoint, request);
  };

  const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const input = request.v1Input as RequestInput;
    // Counted from the request's arrival (Fastify's start of the reply), its gates' time included.
    const deadline = Date.now() - reply.elapsedTime + ctx.deps.config.requestDeadlineMs;
    // The plain path's output is computed here, after the upstream wait, and held by nothing made
    // before it (but this frame while an audited route writes its record). Whatever a request made
    // before a long wait (this handler's closures and promises) has been moved to the old
    // generation by then under a slow backend's load, and what that still points to survives every
    // young collection until the next full one: this output, held there, would be moved too (npm
    // run bench:promotion).
    const output = endpoint.idempotent && request.caller && input.idempotencyKey !== undefined
      ? await idempotentOutput(request, reply, input, request.caller, input.idempotencyKey, deadline)
      : outputOf(endpoint, await answer(endpointInput(request, input, deadline), reply), outputMemo);
    if (endpoint.audited) await auditAnswer(request, ctx.deps.audit, output.stored);
    // A PDF goes as its bytes, a memoised body as its encoded JSON, anything else as text.
    const { stored, bytes } = output;
    const payload = stored.headers['content-type'] === PDF_TYPE ? Buffer.from(stored.body, 'base64') : (bytes ?? stored.body);
    return reply.code(stored.status).headers(stored.headers).send(payload);
  };

  /** The stored response of an idempotent request: the outcome of this attempt, or a replay. */
  const idempotentOutput = async (
    request: FastifyRequest,
    reply: FastifyReply,
    input: RequestInput,
    caller: Caller,
    idempotencyKey: string,
    deadline: number,
  ): Promise<Output> => {
    let last: Output | undefined;
    const outcome = await ctx.idempotency.run(
      {
        accountId: caller.account.id,
        key: idempotencyKey,
        method: endpoint.method,
        route: endpoint.url,
        params: input.params,
        body: input.body,
        execute: async (attempt) => (last = outputOf(endpoint, await answer(endpointInput(request, input, deadline, attempt), reply), outputMemo)).stored,
        render: (error) => ({
          status: error.status,
          headers: { 'content-type': 'application/problem+json; charset=utf-8', ...error.headers },
          body: JSON.stringify(problemDocument(error, request.id, ctx.typeBase)),
        }),
      },
      toApiError,
      request.log,
    );
    if (outcome.replayed) reply.header('idempotent-replayed', 'true');
    // This attempt's encoded bytes serve only the response it produced, never a replay.
    return { stored: outcome.response, bytes: outcome.response === last?.stored ? last.bytes : undefined };
  };

  const preParsing = endpoint.idempotent ? [idempotencyKeyBeforeBody] : [];
  mount({ method: endpoint.method, url: endpoint.url, config: { scope: endpoint.scope, audited: endpoint.audited === true }, onRequest, preParsing, preValidation, handler });
}
