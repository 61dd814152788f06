/**
 * The v1 passthrough: each endpoint that is not answered locally is mounted as its own
 * @fastify/http-proxy route inside the gateway's pipeline (the gates run as hooks of that route,
 * first), and its handler forwards through reply.from with the request rebuilt: validated body and
 * query, this account's upstream key, a namespaced Idempotency-Key. The answer is captured
 * (capture.ts) and read (answer.ts) before anything reaches the client.
 */
import { performance } from 'node:perf_hooks';
import type { FastifyInstance, FastifyReply, RouteOptions } from 'fastify';
import { BackendError } from '../../src/backend/backend.js';
import type { BackendLogger } from '../../src/backend/logger.js';
import type { ForwardCall, Forwarder } from '../../src/http/forwarding.js';
import { DETAIL, redactor } from '../../src/upstream/answers.js';
import { DEADLINE_HEADER, DeadlineDispatcher } from '../../src/upstream/deadline-dispatcher.js';
import { Agent } from '../../src/upstream/undici.js';
import { ownEntry } from '../../src/own-entry.js';
import { traceHeaders } from '../../src/ops/trace.js';
import { sourceAddress } from '../../src/http/source-address.js';
import { createWaitingBound } from '../../src/upstream/busy.js';
import { assertTimeLeft, callDeadline, RequestDeadlineReached, sendByOf, SLOW_CUT_MS } from '../../src/upstream/request-deadline.js';
import type { UpstreamHooks, UpstreamOutcome } from '../../src/upstream/observer.js';
import { isOwnAnswer, readAnswer } from './answer.js';
import { createPassthroughBreaker } from './breaker.js';
import { capture, CaptureFailure, type ReplyOptions } from './capture.js';
import type { V1Config } from './config.js';
import { upstreamHeaders, upstreamIdempotencyKey } from './headers.js';

/** A health probe must answer quickly or count as down. */
const PING_TIMEOUT_MS = 2_000;

type ProxyReply = FastifyReply & { fromParameters(url: string, params: unknown, prefix: string): { url: string; options: ReplyOptions } };

const CAPTURE_FAILURES: Record<CaptureFailure['kind'], { kind: BackendError['kind']; detail: string }> = {
  unreachable: { kind: 'unavailable', detail: DETAIL.unreachable },
  timeout: { kind: 'timeout', detail: DETAIL.timeout },
  broken: { kind: 'upstream_error', detail: DETAIL.broken },
  too_large: { kind: 'upstream_error', detail: DETAIL.unreadable },
  invalid: { kind: 'upstream_error', detail: DETAIL.unreadable },
  dropped: { kind: 'upstream_error', detail: DETAIL.broken },
};

function outcomeOf(error: unknown): UpstreamOutcome {
  if (error instanceof BackendError) return error.kind;
  // A problem the upstream answered for the client (422, 409 …): the call itself worked.
  return 'success';
}

/** The query as validated, never the client's raw string. */
function queryOf(query: unknown): string {
  const entries = Object.entries((query ?? {}) as Record<string, unknown>).filter(([, value]) => value !== undefined);
  return new URLSearchParams(entries.map(([name, value]): [string, string] => [name, String(value)])).toString();
}

/** The endpoint's path with its validated parameters (ids of digits), e.g. `/v1/services/7`. */
function routedPath(pattern: string, params: unknown): string {
  const values = (params ?? {}) as Record<string, unknown>;
  return pattern.replace(/:([A-Za-z_]+)/g, (_, name: string) => encodeURIComponent(String(values[name])));
}

export function createV1Forwarder(config: V1Config, deps: { logger: BackendLogger; hooks?: UpstreamHooks }): Forwarder {
  const base = new URL(config.url.replace(/\/+$/, ''));
  const basePath = base.pathname.replace(/\/+$/, '');
  // Our own dispatcher: reply-from builds one that skips TLS certificate checks unless given one,
  // and an upstream key must only ever go to the host that proves it is the upstream. Undici
  // follows no redirects.
  const agent = new Agent({
    connections: config.connections,
    connect: { timeout: config.connectTimeoutMs },
    headersTimeout: config.writeTimeoutMs,
    bodyTimeout: config.writeTimeoutMs,
  });
  // What the proxy sends through: a request past its deadline is never sent (see the dispatcher).
  const proxied = new DeadlineDispatcher(agent);
  const observer = deps.hooks?.observer;
  const breaker = createPassthroughBreaker(config.circuitBreaker, { logger: deps.logger, observer, probe: health });

  /** The upstream's GET /v1/health: its status, or a rejection when no answer came in time. */
  async function health(): Promise<number> {
    // The whole answer (a wait for a connection and the body included): a body that drips in
    // must not hold the breaker's trial, nor a write waiting for it.
    const signal = AbortSignal.timeout(PING_TIMEOUT_MS);
    const { statusCode, body } = await agent.request({
      origin: base.origin,
      path: `${basePath}/v1/health`,
      method: 'GET',
      headersTimeout: PING_TIMEOUT_MS,
      bodyTimeout: PING_TIMEOUT_MS,
      signal,
    });
    await body.dump({ limit: 128 * 1024, signal });
    return statusCode;
  }

  function upstreamKey(call: ForwardCall): string {
    const { customer } = call.caller;
    // Only a configured entry: an id such as `constructor` must not find Object.prototype's.
    const key = ownEntry(config.apiKeys, customer.upstreamId);
    if (key === undefined) {
      throw new BackendError('upstream_error', DETAIL.refused, {
        operatorMessage: `upstream.v1.apiKeys has no key for upstream id "${customer.upstreamId}" (account ${customer.accountId}); nothing was sent`,
      });
    }
    return key;
  }

  /** Forwards on a connection or waiting for one (src/upstream/busy.ts says why they are bounded). */
  const bound = createWaitingBound(config.connections);

  function forward(call: ForwardCall, reply: FastifyReply): Promise<ReturnType<typeof readAnswer>> {
    // Before the breaker and the write-ahead mark: nothing sent, a write known not to have run.
    return bound.run(
      () => send(call, reply),
      () => observer?.called(call.endpoint.operationId, 'queue_full', 0),
    );
  }

  async function send(call: ForwardCall, reply: FastifyReply): Promise<ReturnType<typeof readAnswer>> {
    const { endpoint, caller, attempt } = call;
    const write = endpoint.method !== 'GET';
    const apiKey = upstreamKey(call);
    // The path as routed and validated, never the raw request target: in absolute form
    // (`GET http://host/v1/…`) the router reads its path, and the proxy would rebuild another.
    const path = routedPath(endpoint.url, call.params);
    const { url, options } = (reply as ProxyReply).fromParameters(path, call.params, endpoint.url);
    const clientAddress = config.forwardClientAddress ? sourceAddress(reply.request) : undefined;
    const idempotencyKey =
      attempt && call.idempotencyKey !== undefined ? upstreamIdempotencyKey(caller.account.id, call.idempotencyKey, attempt.recordId) : undefined;
    // Before the write-ahead mark: a write the open breaker refuses is known not to have run. A
    // write's ticket is never the trial (the health probe is), so a failed mark leaves none open.
    const ownMs = write ? config.writeTimeoutMs : config.timeoutMs;
    // Too little of the request's time left: refused before the breaker and the mark, nothing sent.
    assertTimeLeft(ownMs, call.call.deadline, write);
    const ticket = await breaker.admit(endpoint.operationId, write, call.call.trace);
    // Write-ahead: from here on, a retry reconciles (it forwards the same upstream key again).
    if (attempt) await attempt.beforeWrite();
    const started = performance.now();
    // The forward's own timeout, or what is left of the request's: whichever ends first, a trial's
    // too (its client is answered then; cut, it is abandoned: breaker.ts).
    const requestDeadline = call.call.deadline;
    const ends = callDeadline(ownMs, requestDeadline);
    const cut = ends === requestDeadline;
    // Cut by the request's deadline: not sent at all once too little is left, should it wait that long for a connection.
    const scheduled = proxied.schedule(ends, sendByOf(ownMs, ends, requestDeadline));
    try {
      const answer = await capture(
        reply,
        url,
        {
          ...options,
          method: endpoint.method,
          ...(write ? { body: call.body ?? {} } : {}),
          queryString: () => queryOf(call.query),
          rewriteRequestHeaders: (_request, prepared) => ({
            ...upstreamHeaders(prepared, { apiKey, upstreamId: caller.customer.upstreamId, requestId: call.requestId, clientAddress, trace: call.call.trace && traceHeaders(call.call.trace), idempotencyKey }, write),
            // Read and removed by the dispatcher: it is never sent.
            [DEADLINE_HEADER]: scheduled.header,
          }),
        },
        { deadlineMs: Math.max(1, ends - Date.now()), maxBytes: config.maxResponseBytes },
      );
      // The status, and whether the upstream wrote the answer itself, tell the breaker whether it
      // is up, whatever readAnswer makes of the answer.
      // Parsed for a 502 or 503 only: the statuses where who wrote it, and about what, matters.
      breaker.answered(ticket, endpoint.operationId, answer.status, (answer.status === 502 || answer.status === 503) && isOwnAnswer(answer), call.call.trace);
      const result = readAnswer({ endpoint, write, params: call.params, redact: redactor([apiKey]) }, answer);
      observer?.called(endpoint.operationId, 'success', (performance.now() - started) / 1000);
      return result;
    } catch (error) {
      let failure = error;
      if (error instanceof CaptureFailure) {
        // Cut by the request's own deadline, unsent or sent less than SLOW_CUT_MS before: it says
        // nothing of the upstream (request-deadline.ts; client.ts, cutByRequest). Sent longer
        // before, it is a timeout, as its own would have been.
        const slow = scheduled.sent && Date.now() - scheduled.sentAt >= SLOW_CUT_MS;
        if (cut && error.kind === 'timeout' && !slow) {
          failure = scheduled.sent ? fromCapture(error, write, endpoint.operationId, true) : new RequestDeadlineReached(write);
          breaker.abandoned(ticket, call.call.trace);
        } else {
          failure = fromCapture(error, write, endpoint.operationId, scheduled.sent);
          breaker.lost(ticket, error.kind, failure as BackendError, call.call.trace);
        }
      }
      observer?.called(endpoint.operationId, outcomeOf(failure), (performance.now() - started) / 1000);
      throw failure;
    } finally {
      scheduled.end();
    }
  }

  function fromCapture(failure: CaptureFailure, write: boolean, action: string, sent: boolean): BackendError {
    const { kind, detail } = CAPTURE_FAILURES[failure.kind];
    return new BackendError(kind, detail, {
      operatorMessage: `v1 upstream ${action}: ${failure.kind}: ${failure.message}`,
      // Once a write left, only its answer tells what happened; one no connection took never ran.
      outcomeUnknown: write && sent && failure.kind !== 'unreachable',
      notRun: write && !sent,
    });
  }

  return {
    name: 'v1',
    writeTimeoutMs: config.writeTimeoutMs,
    mount(app: FastifyInstance, route: RouteOptions) {
      void app.register(async (scope) => {
        // The pipeline's gates and validation run as hooks of the proxy's route, before its handler.
        for (const hook of [route.onRequest ?? []].flat()) scope.addHook('onRequest', hook);
        for (const hook of [route.preParsing ?? []].flat()) scope.addHook('preParsing', hook);
        for (const hook of [route.preValidation ?? []].flat()) scope.addHook('preValidation', hook);
        // Loaded here, not at the top: every gateway loads this module (its backend is chosen by the
        // config), and the proxy with its dependencies adds about 2 MB to a process that never forwards.
        const { default: httpProxy } = await import('@fastify/http-proxy');
        await scope.register(httpProxy, {
          upstream: base.href.replace(/\/+$/, ''),
          prefix: route.url,
          rewritePrefix: `${basePath}${route.url}`,
          // Exactly the endpoint's path and method: nothing else under it is proxied.
          routes: [''],
          httpMethods: [route.method as string],
          config: route.config ?? {},
          // Bodies are parsed (and validated) by the gateway, then forwarded as validated.
          proxyPayloads: false,
          undici: proxied,
          // Never sent twice by the proxy: reads have a deadline, writes are reconciled by idempotency.
          retryMethods: [],
          disableRequestLogging: true,
          handler: (request, reply) => route.handler.call(scope, request, reply),
        });
      });
    },
    forward,
    // Through the breaker: false at once while it is open (nothing sent), and a probe answered in
    // half-open closes it. With every connection busy and the breaker closed, up without a probe
    // (it would wait behind the forwards, which are being answered): an instance under load stays
    // ready, as the mappings' do (src/upstream/client.ts, waitForConnection). Open, the forwards
    // still in flight were admitted before it opened: the breaker answers.
    ping: () => (breaker.isClosed() && bound.connectionsBusy() ? Promise.resolve(true) : breaker.ping()),
    async close() {
      // Requests still in flight (a hanging upstream) must not hold the shutdown.
      await agent.destroy();
    },
  };
}
