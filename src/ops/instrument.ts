/**
 * What the app does for operations on every request: it joins or starts a W3C trace (its id bound
 * to the request's logger, the context kept for the calls the request makes), and counts the
 * request by route template, method and status once it is answered.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { type GatewayMetrics, UNMATCHED_ROUTE } from './metrics.js';
import { REQUEST_LOGGER } from '../logger.js';
import { runInTrace, type TraceContext, traceFromHeaders } from './trace.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The W3C trace this request belongs to. */
    trace: TraceContext;
  }
}

/** The trace is read once, where the request's logger is made, and kept on the raw request. */
const TRACE = Symbol('trace');
type TracedMessage = IncomingMessage & { [TRACE]?: TraceContext };

function traceOf(raw: TracedMessage): TraceContext {
  return (raw[TRACE] ??= traceFromHeaders(raw.headers));
}

/** Must be installed before any other onRequest hook: they run inside the trace. */
export function installTracing(app: FastifyInstance): void {
  app.decorateRequest('trace', undefined as unknown as TraceContext);
  app.setChildLoggerFactory(function (logger, bindings, options, raw) {
    const child = logger.child({ ...bindings, trace_id: traceOf(raw as TracedMessage).traceId }, options);
    // Lines of this logger carry trace_id already: the mixin (logger.ts) must not add it again.
    Object.defineProperty(child, REQUEST_LOGGER, { value: true });
    return child;
  });
  app.addHook('onRequest', (request, _reply, done) => {
    request.trace = traceOf(request.raw);
    runInTrace(request.trace, done);
  });
}

export function installRequestMetrics(app: FastifyInstance, metrics: GatewayMetrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.httpRequest(request.routeOptions.url ?? UNMATCHED_ROUTE, request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}
