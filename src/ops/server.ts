/**
 * The operations listener: `/livez`, `/readyz` and `/metrics` on their own port (`ops.port`,
 * loopback by default), never on the public one, and the admin API under `/admin/v1` when admin
 * tokens are configured (src/admin/). It is a Fastify instance of its own, built next to the app
 * (the app is built and tested without it); other modules register their operator routes on it
 * before it listens.
 */
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { AdminApi } from '../admin/api.js';
import { ADMIN_PREFIX } from '../admin/register.js';
import type { Backend } from '../backend/backend.js';
import { answerUnreadableRequest, hostRefusal, targetRefusal } from '../http/unreadable-request.js';
import { expectationRefusal, NODE_HTTP_OPTIONS, serveExpectations } from '../http/expectations.js';
import type { Stores } from '../stores/types.js';
import { boundedPing } from './bounded-ping.js';
import { parserRefusalCounts, watchRequestEnds } from './instrument.js';
import { UNMATCHED_ROUTE, type OpsRequestCounts } from './metrics.js';

/** Probes come every few seconds from every orchestrator: a check serves them all this long. */
const READY_CHECK_TTL_MS = 1_000;

type DependencyState = 'ok' | 'down' | 'unchecked';

export interface ReadyReport {
  ready: boolean;
  store: DependencyState;
  upstream: DependencyState;
  shuttingDown: boolean;
}

/**
 * Whether the app should get traffic: its store answers, and it is not shutting down. The upstream
 * is checked and reported, but it makes the app unready only when `ops.readyRequiresUpstream` asks:
 * every instance shares it, so an upstream outage would take every instance out of the load
 * balancer at once, and integrators would meet the balancer's own error page instead of the
 * gateway's 503 `upstream_unavailable` with `Retry-After` (and lose the reads it still serves from
 * its catalog cache, `/v1/me`, and the admin API).
 */
export class Readiness {
  private shuttingDown = false;
  private last: { at: number; result: Promise<{ store: DependencyState; upstream: DependencyState }> } | undefined;

  constructor(private readonly deps: { stores: Pick<Stores, 'ping'>; backend: Pick<Backend, 'ping'>; upstreamRequired: boolean }) {}

  /** From now on the app is unready (SIGTERM, before the drain starts). */
  beginShutdown(): void {
    this.shuttingDown = true;
  }

  async check(): Promise<ReadyReport> {
    // Shutting down: unready at once, whatever the dependencies (they are closing too).
    if (this.shuttingDown) return { ready: false, store: 'unchecked', upstream: 'unchecked', shuttingDown: true };
    const deps = await this.dependencies();
    const upstreamReady = deps.upstream === 'ok' || !this.deps.upstreamRequired;
    return { ready: !this.shuttingDown && deps.store === 'ok' && upstreamReady, ...deps, shuttingDown: this.shuttingDown };
  }

  private dependencies(): Promise<{ store: DependencyState; upstream: DependencyState }> {
    const now = Date.now();
    if (this.last && now - this.last.at < READY_CHECK_TTL_MS) return this.last.result;
    // Bounded, as /v1/health is: a probe gets its answer in time, and a cluster's primary hears every worker (workers.ts).
    const result = Promise.all([boundedPing(() => this.deps.stores.ping()), boundedPing(() => this.deps.backend.ping())]).then(([store, upstream]) => ({
      store: store ? ('ok' as const) : ('down' as const),
      upstream: upstream ? ('ok' as const) : ('down' as const),
    }));
    this.last = { at: now, result };
    return result;
  }
}

export interface OpsTarget {
  /** An app's metrics, or (the primary of a cluster) every worker's aggregated. */
  metrics: {
    registry: { contentType: string; metrics(): Promise<string> };
    collectRuntimeMetrics(): void;
    /** Where this listener's own requests are counted (scraped with the rest). */
    opsRequests: Pick<OpsRequestCounts, 'count'>;
  };
  readiness: Pick<Readiness, 'check'>;
  /** The primary of a cluster: whether every listening worker answers (a single process answering is alive). */
  alive?: () => Promise<boolean>;
  log: FastifyInstance['log'];
  admin: AdminApi | null;
}

/**
 * The ops listener for an app (not listening yet). Its requests are not logged one by one: probes
 * and scrapes would drown the application log. They are counted, in a family of their own.
 */
export function buildOpsApp(target: OpsTarget): FastifyInstance {
  const { admin } = target;
  const counts = target.metrics.opsRequests;
  const countUnmatched = (method: string, status: number): void => counts.count(UNMATCHED_ROUTE, method, status);
  // The router's own refusals skip every hook: counted once sent.
  const countRouterAnswer = (request: FastifyRequest, reply: FastifyReply): void => {
    reply.raw.once('finish', () => countUnmatched(request.method, reply.statusCode));
  };
  const ops = Fastify({
    loggerInstance: target.log.child({ component: 'ops' }),
    logController: new LogController({ disableRequestLogging: true }),
    // Probes (livez, readyz, metrics) and admin reads answer HEAD as GET, without the body.
    exposeHeadRoutes: true,
    // As on the public listener: a client that never finishes its request (admin bodies included)
    // does not hold a connection for good.
    requestTimeout: 30_000,
    // Admin answers carry it (X-Request-Id, the problem's instance) and the admin audit names it.
    genReqId: () => randomUUID(),
    // No bare answers from Node (see the hook below): a missing or repeated Host, or an unknown Expect, is refused here.
    http: NODE_HTTP_OPTIONS,
    // Requests Node cannot parse (oversized heads) answered as a problem (414, 431), as the admin
    // API's are, rather than Node's bare 431; one not received within the request timeout is
    // answered 408 `request_timeout`, as on the public listener (unless its answer has started).
    ...(admin
      ? {
          clientErrorHandler: (error: Error & { code?: string }, socket: Duplex) =>
            answerUnreadableRequest(error, socket, admin.problemTypeBase, { log: target.log, ...parserRefusalCounts(countUnmatched) }),
        }
      : {}),
    // The router's own refusals skip every hook; on an admin path they are problems as well.
    frameworkErrors: (error, request, reply) => {
      const answer = reply as FastifyReply;
      countRouterAnswer(request, answer);
      if (target.admin && request.url.startsWith(`${ADMIN_PREFIX}/`)) return target.admin.routerError(error, answer);
      return answer.code(error.statusCode ?? 500).send(error);
    },
  });
  serveExpectations(ops.server);
  // First: a request another hook refuses is counted too. Not logged when cut off (see above).
  watchRequestEnds(ops, { count: (request, status) => counts.count(request.routeOptions.url ?? UNMATCHED_ROUTE, request.method, status) });
  // RFC 9112 §3.2: an HTTP/1.1 request without Host, with two, or with an invalid one is 400; a target
  // over 8 KiB 414; an unknown expectation 417 (an admin call: the admin API's problem).
  ops.addHook('onRequest', (request, reply, done) => {
    const error = hostRefusal(request.raw) ?? targetRefusal(request.raw) ?? expectationRefusal(request.raw);
    if (!error) return done();
    if (target.admin && request.url.startsWith(`${ADMIN_PREFIX}/`)) return done(error);
    void reply.code(error.status).send({ status: 'bad_request', detail: error.detail });
  });
  target.metrics.collectRuntimeMetrics();
  if (target.admin) {
    target.admin.register(ops);
    ops.log.info({ tokens: target.admin.tokenNames }, 'admin API on the ops listener under /admin/v1');
  }

  ops.get('/livez', async (_request, reply) => {
    const alive = (await target.alive?.()) ?? true;
    return reply.code(alive ? 200 : 503).header('cache-control', 'no-store').send({ status: alive ? 'ok' : 'worker_unresponsive' });
  });

  ops.get('/readyz', async (_request, reply) => {
    const report = await target.readiness.check();
    return reply
      .code(report.ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({
        status: report.ready ? 'ready' : 'unready',
        checks: { store: report.store, upstream: report.upstream, shutting_down: report.shuttingDown },
      });
  });

  ops.get('/metrics', async (_request, reply) => {
    const registry = target.metrics.registry;
    const body = await registry.metrics();
    return reply.header('content-type', registry.contentType).header('cache-control', 'no-store').send(body);
  });
  return ops;
}
