/**
 * The admin API as a part of the ops listener: built with the app (it works on the app's stores,
 * key service and webhooks), registered under `/admin/v1` by the ops listener (src/ops/server.ts),
 * and never on the public port. Without a configured admin token there is none.
 */
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import type { ResolvedConfig } from '../config.js';
import { ApiError } from '../errors.js';
import { Idempotency } from '../http/idempotency.js';
import { installJsonBodyParser } from '../http/json-body.js';
import { routePattern, sendProblem } from '../http/problems.js';
import type { KeyService } from '../keys/key-service.js';
import type { Stores } from '../stores/types.js';
import type { Webhooks } from '../webhooks/service.js';
import { auditAdminCall, subjectOf, type AdminAuditLog } from './audit.js';
import type { AdminEndpoint } from './endpoint.js';
import { toAdminApiError } from './problems.js';
import { AdminRateLimit } from './rate-limit.js';
import { ADMIN_PREFIX, registerAdminEndpoint, type AdminRegisterContext } from './register.js';
import { adminEndpoints } from './routes/index.js';
import { AdminService } from './service.js';
import { AdminTokens } from './tokens.js';
import { WebhookAdmin } from './webhook-service.js';
import { publicBaseUrl } from '../openapi/server-url.js';

/** How long an admin write may take (store calls only): the idempotency claim's lease is a little longer. */
const ADMIN_WRITE_TIMEOUT_MS = 5_000;

export interface AdminApi {
  /** The names of the configured tokens (never their hashes), for the start-up log. */
  readonly tokenNames: string[];
  /** Where its problems' types point (config.problemTypeBase). */
  readonly problemTypeBase: string;
  /** Adds the admin routes under `/admin/v1` to `ops` (before it listens). */
  register(ops: FastifyInstance): void;
  /**
   * Answers an admin path the ops listener's router refused (a malformed URL, an over-long id):
   * those skip the hooks and the error handler, and are still problems.
   */
  routerError(error: FastifyError, reply: FastifyReply): FastifyReply;
}

export interface AdminApiDeps {
  config: ResolvedConfig;
  stores: Stores;
  keys: KeyService;
  /** Replays queue through its events; idempotent answers are sealed with its box. */
  webhooks: Pick<Webhooks, 'events' | 'box'>;
  audit: AdminAuditLog;
  /** The backend's check of an account's upstream id (src/backend/registry.ts upstreamIdCheck). */
  upstreamIdProblem: (upstreamId: string) => string | undefined;
}

/** Null when no admin token is configured: the admin API is off. */
export function createAdminApi(deps: AdminApiDeps): AdminApi | null {
  const { config, stores } = deps;
  if (config.admin.tokens.length === 0) return null;
  const service = new AdminService({ keys: deps.keys, store: stores.keys, clock: (id) => stores.webhooks.clock(id), webhooks: stores.webhooks, outbox: stores.webhookOutbox, upstreamIdProblem: deps.upstreamIdProblem });
  const ctx: AdminRegisterContext = {
    service,
    webhooks: new WebhookAdmin(service, stores.webhooks, deps.webhooks.events),
    tokens: new AdminTokens(config.admin.tokens),
    rateLimit: new AdminRateLimit(stores.rateLimits, config.admin.perMinute),
    idempotency: new Idempotency(stores.idempotency, config, ADMIN_WRITE_TIMEOUT_MS),
    box: deps.webhooks.box,
    audit: deps.audit,
    typeBase: config.problemTypeBase,
    bodyLimit: config.bodyLimitBytes,
  };
  const endpoints = adminEndpoints({ serverUrl: publicBaseUrl({ host: config.ops.host, port: config.ops.port }), profile: config.profile, problemTypeBase: config.problemTypeBase });
  return {
    tokenNames: config.admin.tokens.map((token) => token.name),
    problemTypeBase: config.problemTypeBase,
    register(ops) {
      void ops.register(async (scope) => install(scope, endpoints, ctx), { prefix: ADMIN_PREFIX });
    },
    routerError(error, reply) {
      const apiError = error.statusCode !== undefined && error.statusCode < 500
        ? new ApiError('invalid_request', 'The request path is invalid.')
        : new ApiError('internal_error', 'An unexpected error occurred; it has been logged.');
      return sendProblem(reply.header('cache-control', 'no-store'), apiError, ctx.typeBase);
    },
  };
}

function install(scope: FastifyInstance, endpoints: AdminEndpoint[], ctx: AdminRegisterContext): void {
  scope.removeContentTypeParser('text/plain');
  installJsonBodyParser(scope);
  scope.decorateRequest('adminCaller', undefined);
  scope.decorateRequest('adminInput', undefined);
  scope.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  const byOperation = new Map(endpoints.map((endpoint) => [endpoint.operationId, endpoint]));
  scope.setErrorHandler(async (error, request, reply) => {
    const apiError = toAdminApiError(error);
    if (apiError.status >= 500 && apiError.reason !== 'store_unavailable') request.log.error({ err: error }, 'admin call failed');
    const endpoint = byOperation.get(request.routeOptions.config.adminOperation ?? '');
    if (endpoint) {
      await auditAdminCall(ctx.audit, {
        request,
        token: request.adminCaller?.name ?? null,
        operation: endpoint.operationId,
        route: endpoint.url,
        subject: subjectOf(endpoint.url, request.params, endpoint.subject?.({ body: request.adminInput?.body, answer: undefined })),
        status: apiError.status,
        reason: apiError.reason,
        replayed: false,
      });
    }
    return sendProblem(reply, apiError, ctx.typeBase);
  });

  // An admin path no endpoint serves: 405 with Allow when another method would, else 404 (not audited: no call was made).
  const shapes = endpoints.map((endpoint) => ({
    // As the router matches (and as v1's table does): `.` is a dot, and a trailing slash is another path.
    pattern: routePattern(endpoint.url),
    // A GET route answers HEAD too (the ops listener exposes HEAD routes).
    methods: endpoint.method === 'GET' ? ['GET', 'HEAD'] : [endpoint.method],
  }));
  scope.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allow = [...new Set(shapes.filter((shape) => shape.pattern.test(path)).flatMap((shape) => shape.methods))].sort().join(', ');
    const error = allow
      ? new ApiError('method_not_allowed', `${request.method} is not allowed here; use ${allow}.`, { headers: { allow } })
      : new ApiError('not_found', 'No such admin resource.');
    return sendProblem(reply, error, ctx.typeBase);
  });

  for (const endpoint of endpoints) registerAdminEndpoint(scope, endpoint, ctx);
}
