/**
 * The gateway as a Fastify app, built from a validated config. The process entry (server.ts) only
 * loads config, listens and shuts down; tests build the app and use inject or a real port.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { createAdminApi, type AdminApi } from './admin/api.js';
import { sharedCustomersWarning, unservedAccountsWarning } from './startup/shared-customers.js';
import { checkSharedSecrets } from './startup/shared-secrets.js';
import type { AdminAuditLog } from './admin/audit.js';
import type { Backend, BackendCapabilities } from './backend/backend.js';
import { ConfigError, defaultProblemTypeBase, type ResolvedConfig } from './config.js';
import { ApiError } from './errors.js';
import { FileAuditLog, observedAuditLog, type AuditLog } from './audit.js';
import { isLocal, type Endpoint, type EndpointDeps, type GatewayDeps } from './http/endpoint.js';
import { installProblemHandling, sendProblem } from './http/problems.js';
import { installJsonBodyParser } from './http/json-body.js';
import { registerProblemPages } from './http/problem-pages.js';
import { answerUnreadableRequest } from './http/unreadable-request.js';
import { NODE_HTTP_OPTIONS, serveExpectations } from './http/expectations.js';
import { Idempotency } from './http/idempotency.js';
import { registerEndpoint, type RegisterContext } from './http/register.js';
import { forwardedAnswer } from './http/forwarding.js';
import { installRequestGate } from './http/request-gate.js';
import { trustedProxyTest } from './http/source-address.js';
import { KeyService } from './keys/key-service.js';
import { resolvePepper } from './keys/pepper.js';
import { RateLimiter } from './limits/rate-limiter.js';
import { AccessLogController, loggerOptions } from './logger.js';
import { buildOpenApiDocument, type DocumentOptions } from './openapi/document.js';
import { publicBaseUrl } from './openapi/server-url.js';
import { endpoints } from './routes/v1/index.js';
import { openApiEndpoint } from './routes/v1/openapi.js';
import { createUpstream, linkOf, type Upstream } from './backend/factory.js';
import { timedBackend } from './backend/wait.js';
import { upstreamIdCheck, type BackendRegistry } from './backend/registry.js';
import { DoctorMonitor } from './doctor/monitor.js';
import { PROFILE_ACTIONS } from './v1/schemas.js';
import { createStores } from './stores/factory.js';
import { MemoryRateLimitStore } from './stores/memory/index.js';
import type { Stores } from './stores/types.js';
import { createWebhooks } from './webhooks/service.js';
import { secretBoxFor } from './webhooks/secret-box.js';
import { dnsResolver } from './webhooks/url-policy.js';
import { InvoicePdfRenderer } from './pdf/render-pool.js';
import { countRouterAnswer, installRequestMetrics, installTracing, parserRefusalCounts } from './ops/instrument.js';
import { GatewayMetrics, UNMATCHED_ROUTE } from './ops/metrics.js';
import { Readiness } from './ops/server.js';
import type { FailedLoginPeers } from './upstream/observer.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** `METHOD /url` of every route registered, as Fastify serves them. */
    servedRoutes: readonly string[];
    /** The backend's self-checks in this process (run at ready and every doctor.intervalMs). */
    doctor: DoctorMonitor;
    /** This app's Prometheus metrics (its own registry), served by the ops listener. */
    metrics: GatewayMetrics;
    /** What /readyz of the ops listener answers; the process entry marks the shutdown. */
    readiness: Readiness;
    /** The admin API the ops listener serves under /admin/v1; null when no admin token is configured. */
    admin: AdminApi | null;
  }
}

export interface AppOverrides {
  /** The backend to serve; else built from `backends` by the config's `upstream.backend`. */
  backend?: Backend;
  backends?: BackendRegistry;
  stores?: Stores;
  audit?: AuditLog;
  /** The admin audit log; else the file `admin.auditFile`. */
  adminAudit?: AdminAuditLog;
  /** Where log lines go (tests capture them). */
  logStream?: NodeJS.WritableStream;
  resolveHost?: (host: string) => Promise<string[]>;
  /** False: events are queued but no delivery worker or change detector runs (tests that do not deliver). */
  runWebhooks?: boolean;
  /** A cluster worker's: the other workers' failed logins at the upstream (src/upstream/credential-hold.ts). */
  failedLoginPeers?: FailedLoginPeers;
}

function requireRegistry(backends: BackendRegistry | undefined): BackendRegistry {
  if (!backends) throw new Error('buildApp needs a backend or the backend registry');
  return backends;
}

/**
 * A new request id: a UUID, as flat text. randomUUID joins 20 parts with `+`, which V8 keeps as a
 * tree of 13 nodes (416 bytes) for as long as the request holds its id, a slow upstream call's wait
 * included; lowering a UUID changes nothing in it but makes it one flat string of 36 bytes.
 */
function requestId(): string {
  return randomUUID().toLowerCase();
}

/**
 * The request target in origin form. A client may send it in absolute form (`GET http://host/v1/me`,
 * RFC 9112 §3.2.2, which a server must accept); the router finds the route by its path, but what
 * reads the raw target after it (the passthrough's proxy, which refused it as a foreign
 * destination; logs; idempotency fingerprints) would see another text for the same request.
 */
export function originForm(target: string | undefined): string {
  if (target === undefined || target.charCodeAt(0) === 47 /* / */) return target ?? '/';
  try {
    const url = new URL(target);
    return url.protocol === 'http:' || url.protocol === 'https:' ? `${url.pathname}${url.search}` : target;
  } catch {
    return target;
  }
}

export async function buildApp(config: ResolvedConfig, overrides: AppOverrides = {}): Promise<FastifyInstance> {
  const accessLog = new AccessLogController({ requestIdLogLabel: 'request_id' });
  const metrics = new GatewayMetrics();
  const app: FastifyInstance = Fastify({
    logger: loggerOptions(config, overrides.logStream),
    genReqId: requestId,
    logController: accessLog,
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustedProxies.length > 0 ? trustedProxyTest(config.trustedProxies) : false,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Every GET route answers HEAD too (RFC 9110 §9.3.2): the same gates, status and headers, no body.
    exposeHeadRoutes: true,
    // Time to receive a whole request (slow-client protection); it does not limit slow upstream answers.
    requestTimeout: 30_000,
    // Longer than the idle timeout of a load balancer in front (config.ts).
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // While draining, requests on open connections are still served (with Connection: close):
    // the stores and the upstream client close only after the server has.
    return503OnClosing: false,
    routerOptions: { maxParamLength: 100 },
    rewriteUrl: (request) => originForm(request.url),
    // A head Node cannot parse (414, 431, 400), or a request not received in time (408): a problem,
    // logged under the id it was given, and counted. No route matched and no time is known before
    // the parser's error: its own share is the instant it is answered in.
    clientErrorHandler: (error, socket) =>
      answerUnreadableRequest(error, socket, config.problemTypeBase, { log: app.log, ...parserRefusalCounts((method, status) => metrics.httpRequest(UNMATCHED_ROUTE, method, status, 0, 0)) }),
    // No bare answers from Node: the request gate refuses a missing or bad Host, and an unknown Expect (417).
    http: NODE_HTTP_OPTIONS,
    // Errors of the router itself (a malformed URL, an over-long path parameter) skip the hooks
    // and the error handler; they are still problems.
    frameworkErrors: (error, request, reply) => {
      countRouterAnswer(request, reply, metrics, accessLog);
      const apiError = error.statusCode !== undefined && error.statusCode < 500
        ? new ApiError('invalid_request', 'The request path is invalid.')
        : new ApiError('internal_error', 'An unexpected error occurred; it has been logged.');
      return sendProblem(reply, apiError, config.problemTypeBase);
    },
  });
  serveExpectations(app.server);
  app.removeContentTypeParser('text/plain');
  installJsonBodyParser(app);
  app.decorateRequest('caller', undefined);
  app.decorateRequest('v1Input', undefined);
  app.decorateRequest('problem', undefined);
  const servedRoutes: string[] = [];
  app.decorate('servedRoutes', servedRoutes);

  installTracing(app);
  app.decorate('metrics', metrics);
  installRequestMetrics(app, metrics);

  const stores = overrides.stores ?? (await createStores(config));
  const upstream: Upstream = overrides.backend
    ? { kind: 'maps', backend: overrides.backend }
    : createUpstream(config, requireRegistry(overrides.backends), app.log, { observer: metrics.upstream(config.upstream.backend), failedLoginPeers: overrides.failedLoginPeers });
  // A forwarder has no Backend: no self-checks, no change detection (the upstream sends its own events).
  const backend = upstream.kind === 'maps' ? upstream.backend : undefined;
  const link = linkOf(upstream);
  const audit = observedAuditLog(overrides.audit ?? new FileAuditLog(config.audit.file), metrics.auditWrite.bind(metrics));
  app.decorate('readiness', new Readiness({ stores, backend: link, upstreamRequired: config.ops.readyRequiresUpstream }));
  const keys = new KeyService(stores.keys, resolvePepper(config), {
    cacheTtlMs: config.keys.cacheTtlMs,
    staleIfErrorMs: config.keys.staleIfErrorMs,
    previousPeppers: config.keys.previousPeppers,
    issueChecksums: config.keys.issueChecksums,
    observer: metrics,
  });
  const box = secretBoxFor(config);
  await checkSharedSecrets(keys, stores.webhooks, box);
  const upstreamIdProblem = upstreamIdCheck(overrides.backends, config.upstream.backend);
  const accounts = await keys.listAccounts();
  for (const warning of [sharedCustomersWarning(accounts), unservedAccountsWarning(accounts, upstreamIdProblem)]) if (warning) app.log.warn(warning);
  const doctor = new DoctorMonitor(
    backend ?? {},
    { serviceActions: PROFILE_ACTIONS[config.profile] },
    { intervalMs: config.doctor.intervalMs, log: app.log.child({ component: 'doctor' }) },
  );
  app.decorate('doctor', doctor);
  if (config.doctor.enabled) app.addHook('onReady', async () => doctor.start());
  const resolveHost = overrides.resolveHost ?? dnsResolver();
  const webhooks = createWebhooks(config, stores, backend, resolveHost, app.log, metrics, box);
  const { renderThreads: threads, renderQueue: queue, renderMemoryMb: memoryMb, fonts } = config.pdf;
  const pdf = new InvoicePdfRenderer({ threads, queue, memoryMb, fonts });
  // Only the operator's fonts can be wrong; checking costs a thread's start (then ended), so it runs only for them.
  if (fonts.length > 0) await pdf.checkFonts().catch((error: unknown) => {
    throw new ConfigError(`invalid configuration:\n  - pdf.fonts: ${(error as Error).message}`);
  });
  const deps: GatewayDeps = { config, upstream: link, stores, keys, audit, doctor, resolveHost, webhooks, pdf };
  const adminAudit = overrides.adminAudit ?? new FileAuditLog(config.admin.auditFile);
  app.decorate('admin', createAdminApi({ config, stores, keys, webhooks, audit: adminAudit, upstreamIdProblem }));
  const rateLimiter = new RateLimiter({ store: stores.rateLimits, fallback: new MemoryRateLimitStore(), config, log: app.log, observer: metrics });
  const idempotency = new Idempotency(stores.idempotency, config, link.writeTimeoutMs, metrics);
  const problems = installProblemHandling(app, config.problemTypeBase, audit);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      // HEAD is GET's twin, implied wherever GET is documented: the 405 table lists it, not the document.
      if (method !== 'HEAD') servedRoutes.push(`${method} ${route.url}`);
      problems.addRoute(method, route.url);
    }
  });

  installRequestGate(app, rateLimiter);
  registerProblemPages(app, config.problemTypeBase);

  const ctx: RegisterContext = { deps, rateLimiter, idempotency, typeBase: config.problemTypeBase };
  registerEndpoints(app, allEndpoints(config, backend?.capabilities), ctx, upstream);

  // A response finished while draining closes its connection, so that keep-alive clients do not
  // hold the shutdown open until their idle timeout.
  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (draining) reply.header('connection', 'close');
    done(null, payload);
  });

  // Delivery and change detection run while the app serves; they stop before the stores close.
  app.addHook('onReady', async () => {
    if (overrides.runWebhooks !== false) webhooks.start();
  });
  app.addHook('onClose', async () => {
    doctor.stop();
    await webhooks.stop();
    await Promise.allSettled([link.close(), stores.close(), audit.close(), adminAudit.close(), pdf.close()]);
  });
  return app;
}

/** Each endpoint answered by its handler over the Backend; or, forwarding, passed on unless it is local. */
function registerEndpoints(app: FastifyInstance, endpoints: Endpoint[], ctx: RegisterContext, upstream: Upstream): void {
  if (upstream.kind === 'maps') {
    // One bag per app (health keys its last check by it).
    const deps: EndpointDeps = { ...ctx.deps, backend: timedBackend(upstream.backend) };
    // The input is made for this one call (register.ts): it takes the deps rather than being copied.
    for (const endpoint of endpoints) registerEndpoint(app, endpoint, ctx, (input) => endpoint.handler(Object.assign(input, { deps })));
    return;
  }
  const { forwarder } = upstream;
  for (const endpoint of endpoints) {
    if (isLocal(endpoint)) registerEndpoint(app, endpoint, ctx, (input) => endpoint.handler({ ...input, deps: ctx.deps }));
    else registerEndpoint(app, endpoint, ctx, forwardedAnswer(forwarder, endpoint, ctx.deps), (route) => forwarder.mount(app, route));
  }
}

type DocumentConfig = Pick<ResolvedConfig, 'profile'> & Partial<Pick<ResolvedConfig, 'publicBaseUrl' | 'host' | 'port' | 'issuer' | 'rateLimits' | 'idempotency' | 'problemTypeBase'>>;

/**
 * The endpoints the app serves, OpenAPI route included (for tests that sweep every route). The
 * document offers what the mapped backend supports; without one (forwarding, or no backend named),
 * the profile's whole action set.
 */
export function allEndpoints(config: DocumentConfig, capabilities?: BackendCapabilities): Endpoint[] {
  let document: object | undefined;
  const all: Endpoint[] = [...endpoints, openApiEndpoint(() => document ?? {}) as unknown as Endpoint];
  document = buildOpenApiDocument(all, documentOptions(config, capabilities));
  return all;
}

function documentOptions(config: DocumentConfig, capabilities?: BackendCapabilities): DocumentOptions {
  return {
    profile: config.profile,
    capabilities,
    serverUrl: publicBaseUrl(config),
    rateLimits: config.rateLimits,
    idempotency: config.idempotency,
    problemTypeBase: config.problemTypeBase ?? defaultProblemTypeBase(config.publicBaseUrl),
    ...(config.issuer ? { contact: { name: config.issuer.name, email: config.issuer.email } } : {}),
  };
}

/** The document `GET /v1/openapi.json` serves for this config and backend (scripts and docs use it too). */
export function openApiDocument(config: DocumentConfig, capabilities?: BackendCapabilities): object {
  return buildOpenApiDocument(allEndpoints(config, capabilities), documentOptions(config, capabilities));
}
