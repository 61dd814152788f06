/**
 * The admin pipeline, per endpoint, in order: admin token → scope → the token's rate limit
 * (onRequest) → Idempotency-Key present and well-formed (idempotent endpoints; preParsing, before
 * the body is read) → validation (preValidation) → idempotency → handler →
 * output shaped by the response schema → one admin audit record → answer. Failures anywhere are
 * answered by the admin error handler (api.ts), which audits them too.
 *
 * Idempotent endpoints make keys, so their stored answers hold a full key: the idempotency store
 * keeps them sealed (AES-256-GCM with the webhook encryption key, as webhook secrets are), and a
 * replay opens them. A copy of the store (a Redis dump) therefore shows no key.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Idempotency } from '../http/idempotency.js';
import { idempotencyKeyBeforeBody, readRequestInput, type RequestInput } from '../http/validation.js';
import { compiled } from '../http/compiled-schema.js';
import { problemDocument } from '../errors.js';
import { bearerKey, isBearerScheme, soleAuthorization } from '../keys/api-key.js';
import type { StoredResponse } from '../stores/types.js';
import type { SecretBox } from '../webhooks/secret-box.js';
import { auditAdminCall, subjectOf, type AdminAuditLog } from './audit.js';
import type { AdminEndpoint } from './endpoint.js';
import { insufficientScope, toAdminApiError, unauthenticated } from './problems.js';
import type { AdminRateLimit } from './rate-limit.js';
import type { AdminService } from './service.js';
import type { AdminTokenConfig, AdminTokens } from './tokens.js';
import type { WebhookAdmin } from './webhook-service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The admin token that called (set once it is authenticated, even when its scope is refused). */
    adminCaller: AdminTokenConfig | undefined;
    adminInput: RequestInput | undefined;
  }
  interface FastifyContextConfig {
    /** The admin endpoint's operationId, for the audit of its failures. */
    adminOperation?: string;
  }
}

export interface AdminRegisterContext {
  service: AdminService;
  webhooks: WebhookAdmin;
  tokens: AdminTokens;
  rateLimit: AdminRateLimit;
  idempotency: Idempotency;
  box: SecretBox;
  audit: AdminAuditLog;
  typeBase: string;
  bodyLimit: number;
}

const JSON_TYPE = 'application/json; charset=utf-8';

function authenticate(request: FastifyRequest, tokens: AdminTokens): AdminTokenConfig {
  const header = soleAuthorization(request.raw);
  if (header === undefined || header === '') throw unauthenticated('An admin token is required: Authorization: Bearer <token>.', false);
  if (header === null) throw unauthenticated('Send one Authorization header; this request has several.', true);
  const sent = bearerKey(header);
  if (sent === undefined) throw unauthenticated('The Authorization header must be "Bearer <token>".', isBearerScheme(header));
  const token = tokens.find(sent);
  if (!token) throw unauthenticated('The admin token is not valid.', true);
  return token;
}

/** Where the admin routes live on the ops listener; every admin endpoint's url starts with it. */
export const ADMIN_PREFIX = '/admin/v1';

export function registerAdminEndpoint(scope: FastifyInstance, endpoint: AdminEndpoint, ctx: AdminRegisterContext): void {
  const onRequest = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    reply.header('cache-control', 'no-store');
    const token = authenticate(request, ctx.tokens);
    request.adminCaller = token;
    if (endpoint.scope !== 'any' && !token.scopes.includes(endpoint.scope)) throw insufficientScope(endpoint.scope);
    await ctx.rateLimit.hit(token.name);
  };

  const preValidation = async (request: FastifyRequest): Promise<void> => {
    request.adminInput = readRequestInput(endpoint, request);
  };

  const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const input = request.adminInput as NonNullable<FastifyRequest['adminInput']>;
    const caller = request.adminCaller as AdminTokenConfig;
    const execute = async (recordId?: string): Promise<StoredResponse> => {
      let result;
      try {
        result = await endpoint.handler({
          params: input.params,
          query: input.query,
          body: input.body,
          requestId: request.id,
          caller,
          service: ctx.service,
          webhooks: ctx.webhooks,
          recordId,
          log: request.log,
        });
      } catch (error) {
        // Converted here, so the idempotency rules see a refusal (4xx) and forget the attempt.
        throw toAdminApiError(error);
      }
      const spec = endpoint.responses[result.status];
      if (!spec) throw new Error(`${endpoint.operationId} answered ${result.status}, which it does not document`);
      const body = JSON.stringify(compiled(spec.schema).parse(result.body));
      return { status: result.status, headers: { 'content-type': JSON_TYPE, ...result.headers }, body: endpoint.idempotent ? ctx.box.seal(body) : body };
    };

    let response: StoredResponse;
    let replayed = false;
    if (endpoint.idempotent && input.idempotencyKey !== undefined) {
      const outcome = await ctx.idempotency.run(
        {
          // A scope no v1 account's records can share: `/` is not allowed in a v1 Idempotency-Key.
          accountId: `admin-token:${caller.name}`,
          key: `admin/${input.idempotencyKey}`,
          method: endpoint.method,
          route: endpoint.url,
          params: input.params,
          body: input.body,
          execute: (attempt) => execute(attempt.recordId),
          render: (error) => ({
            status: error.status,
            headers: { 'content-type': 'application/problem+json; charset=utf-8', ...error.headers },
            body: ctx.box.seal(JSON.stringify(problemDocument(error, request.id, ctx.typeBase))),
          }),
        },
        toAdminApiError,
        request.log,
      );
      replayed = outcome.replayed;
      response = { ...outcome.response, body: ctx.box.open(outcome.response.body) };
      if (replayed) reply.header('idempotent-replayed', 'true');
    } else {
      response = await execute();
    }
    const subject = subjectOf(endpoint.url, request.params, endpoint.subject?.({ body: input.body, answer: JSON.parse(response.body) }));
    await auditAdminCall(ctx.audit, {
      request,
      token: caller.name,
      operation: endpoint.operationId,
      route: endpoint.url,
      subject,
      status: response.status,
      reason: null,
      replayed,
    });
    return reply.code(response.status).headers(response.headers).send(response.body);
  };

  scope.route({
    method: endpoint.method,
    url: endpoint.url.slice(ADMIN_PREFIX.length),
    config: { adminOperation: endpoint.operationId },
    bodyLimit: ctx.bodyLimit,
    onRequest,
    preParsing: endpoint.idempotent ? [idempotencyKeyBeforeBody] : [],
    preValidation,
    handler,
  });
}
