/**
 * Turns an `Endpoint` into a Fastify route with the pipeline of DEVELOPERS.md, in this order:
 * key auth → scope → key/account limits (onRequest) → validation (preValidation) → idempotency
 * → handler → output shaped by the response schema. The request id and the source-IP limit run
 * before all of it, app-wide.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import { rateLimitedError, rateLimitHeaders } from '../limits/rate-limiter.js';
import type { StoredResponse } from '../stores/types.js';
import type { Caller, Endpoint, EndpointScope, HandlerResult, Services } from './endpoint.js';
import { Idempotency, readIdempotencyKey } from './idempotency.js';
import { problemDocument } from '../errors.js';
import { parseInput } from './validation.js';
import { toApiError } from './problems.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | undefined;
    v1Input: { params: unknown; query: unknown; body: unknown; idempotencyKey: string | undefined } | undefined;
    /** Set when the source-IP limit is decided together with the key's, after authentication. */
    ipLimitDeferred: boolean;
  }
  interface FastifyContextConfig {
    scope?: EndpointScope;
  }
}

export interface RegisterContext {
  services: Services;
  rateLimiter: RateLimiter;
  idempotency: Idempotency;
  typeBase: string;
}

const BEARER = /^Bearer ([^\s]+)$/;

/** The key in an Authorization header, or undefined. */
export function bearerKey(header: string | undefined): string | undefined {
  return header === undefined ? undefined : BEARER.exec(header)?.[1];
}

function unauthenticated(detail: string, keySent: boolean): ApiError {
  const challenge = keySent ? 'Bearer realm="v1", error="invalid_token"' : 'Bearer realm="v1"';
  return new ApiError('unauthenticated', detail, { headers: { 'www-authenticate': challenge } });
}

async function authenticate(request: FastifyRequest, reply: FastifyReply, ctx: RegisterContext): Promise<Caller> {
  reply.header('cache-control', 'no-store');
  const header = request.headers.authorization;
  if (header === undefined || header === '') throw unauthenticated('An API key is required: Authorization: Bearer <key>.', false);
  const key = bearerKey(header);
  if (key === undefined) throw unauthenticated('The Authorization header must be "Bearer <key>".', true);
  const result = await ctx.services.keys.authenticate(key);
  if (typeof result === 'string') {
    const details = {
      malformed: 'The API key is malformed.',
      unknown: 'The API key is not valid.',
      revoked: 'The API key has been revoked.',
      expired: 'The API key has expired.',
    } as const;
    throw unauthenticated(details[result], true);
  }
  return {
    key: result.key,
    account: result.account,
    customer: { accountId: result.account.id, upstreamId: result.account.upstreamId },
  };
}

function authorize(endpoint: Endpoint, caller: Caller): void {
  if (endpoint.scope === 'any' || endpoint.scope === 'public') return;
  if (caller.key.scopes.includes(endpoint.scope)) return;
  throw new ApiError('insufficient_scope', `This endpoint requires the scope ${endpoint.scope}.`, {
    extensions: { required_scope: endpoint.scope },
    headers: { 'www-authenticate': `Bearer realm="v1", error="insufficient_scope", scope="${endpoint.scope}"` },
  });
}

function toStored(result: HandlerResult, contentType: string): StoredResponse {
  const body = Buffer.isBuffer(result.body) || result.body instanceof Uint8Array
    ? Buffer.from(result.body).toString('base64')
    : JSON.stringify(result.body);
  return { status: result.status, headers: { 'content-type': contentType, ...result.headers }, body };
}

function outputOf(endpoint: Endpoint, result: HandlerResult): { body: unknown; contentType: string } {
  const spec = endpoint.responses[result.status];
  if (!spec) throw new Error(`${endpoint.operationId} answered ${result.status}, which it does not document`);
  if (spec.contentType === 'application/pdf') return { body: result.body, contentType: 'application/pdf' };
  // Parsing through the documented schema strips every field the contract does not name.
  const body = spec.schema ? spec.schema.parse(result.body) : result.body;
  return { body, contentType: 'application/json; charset=utf-8' };
}

/** The source-IP limit on its own: 429 when refused. */
export async function enforceIpLimit(rateLimiter: RateLimiter, ip: string): Promise<void> {
  const decision = await rateLimiter.hitIp(ip);
  if (!decision.allowed) throw rateLimitedError(decision, rateLimitHeaders(decision));
}

export function registerEndpoint(app: FastifyInstance, endpoint: Endpoint, ctx: RegisterContext): void {
  const isPublic = endpoint.scope === 'public';

  const onRequest = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (isPublic) return;
    let caller: Caller;
    try {
      caller = await authenticate(request, reply, ctx);
      authorize(endpoint, caller);
    } catch (error) {
      // The source-IP limit was left for later (see app.ts); a refused request still counts.
      if (request.ipLimitDeferred) await enforceIpLimit(ctx.rateLimiter, request.ip);
      throw error;
    }
    request.caller = caller;
    const decision = request.ipLimitDeferred
      ? await ctx.rateLimiter.hitIpAndKey(request.ip, caller.key)
      : await ctx.rateLimiter.hitKey(caller.key);
    const headers = rateLimitHeaders(decision);
    reply.headers(headers);
    if (!decision.allowed) throw rateLimitedError(decision, headers);
  };

  const preValidation = async (request: FastifyRequest): Promise<void> => {
    request.v1Input = {
      params: endpoint.params ? parseInput(endpoint.params, request.params, 'path') : {},
      query: endpoint.query ? parseInput(endpoint.query, request.query ?? {}, 'query') : {},
      body: endpoint.body ? parseInput(endpoint.body, request.body, 'body') : undefined,
      idempotencyKey: endpoint.idempotent ? readIdempotencyKey(request.headers['idempotency-key']) : undefined,
    };
  };

  const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const input = request.v1Input as NonNullable<FastifyRequest['v1Input']>;
    const execute = async (reconcile: boolean): Promise<StoredResponse> => {
      const context = {
        params: input.params,
        query: input.query,
        body: input.body,
        requestId: request.id,
        ip: request.ip,
        userAgent: request.headers['user-agent'] ?? '',
        caller: request.caller as Caller,
        idempotencyKey: input.idempotencyKey,
        reconcile,
        services: ctx.services,
        log: request.log,
      };
      const result = await endpoint.handler(context);
      const output = outputOf(endpoint, result);
      return toStored({ ...result, body: output.body }, output.contentType);
    };

    let response: StoredResponse;
    if (endpoint.idempotent && request.caller && input.idempotencyKey !== undefined) {
      const outcome = await ctx.idempotency.run(
        {
          accountId: request.caller.account.id,
          key: input.idempotencyKey,
          method: endpoint.method,
          route: endpoint.url,
          params: input.params,
          body: input.body,
          execute,
          render: (error) => ({
            status: error.status,
            headers: { 'content-type': 'application/problem+json; charset=utf-8', ...error.headers },
            body: JSON.stringify(problemDocument(error, request.id, ctx.typeBase)),
          }),
        },
        toApiError,
        request.log,
      );
      response = outcome.response;
      if (outcome.replayed) reply.header('idempotent-replayed', 'true');
    } else {
      response = await execute(false);
    }
    const isBinary = !response.headers['content-type']?.startsWith('application/json') &&
      !response.headers['content-type']?.startsWith('application/problem+json');
    return reply
      .code(response.status)
      .headers(response.headers)
      .send(isBinary ? Buffer.from(response.body, 'base64') : response.body);
  };

  app.route({ method: endpoint.method, url: endpoint.url, config: { scope: endpoint.scope }, onRequest, preValidation, handler });
}
