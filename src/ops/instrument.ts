/**
 * What the app does for operations on every request: it joins or starts a W3C trace (its id bound
 * to the request's logger, the context kept for the calls the request makes), and counts the
 * request by route template, method and status once it is answered.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type GatewayMetrics, UNMATCHED_ROUTE } from './metrics.js';
import { type TraceContext, traceFromHeaders } from './trace.js';
import type { BackendWait } from '../backend/wait.js';
import type { UnreadableEdge } from '../http/unreadable-request.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The W3C trace this request belongs to. */
    trace: TraceContext;
    /** Its wait on the backend, made when its handler first runs; undefined for a request answered before. */
    backendWait: BackendWait | undefined;
  }
}

/** The trace is read once, where the request's logger is made, and kept on the raw request. */
const TRACE = Symbol('trace');
type TracedMessage = IncomingMessage & { [TRACE]?: TraceContext };

/**
 * The reply a connection waits on (HTTP/1.1 answers in order: the newest request's), and that its
 * close is watched: one listener a connection, where Fastify's onRequestAbort adds one a request.
 */
const IN_FLIGHT = Symbol('in flight');
const WATCHED = Symbol('watched');
/** Set when the server cut the connection off for the request timeout (unreadable-request.ts). */
const TIMED_OUT = Symbol('timed out');
type WatchedSocket = Socket & { [IN_FLIGHT]?: FastifyReply | undefined; [WATCHED]?: true; [TIMED_OUT]?: true };

function traceOf(raw: TracedMessage): TraceContext {
  return (raw[TRACE] ??= traceFromHeaders(raw.headers));
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type PinoLogger = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

/**
 * A request's logger, made only when the request writes a line of its own: most never do (their
 * access line is written apart, see logger.ts), and making a pino child serialises its bindings.
 * Lines below the app's level are dropped without making it.
 */
class RequestLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: PinoLogger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: object,
    private readonly raw: TracedMessage,
  ) {}

  private get logger(): FastifyBaseLogger {
    if (!this.made) {
      this.made = this.parent.child({ ...this.bindings, trace_id: traceOf(this.raw).traceId }, this.options);
    }
    return this.made;
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  private write(level: Level, args: unknown[]): void {
    if (this.made === undefined && !this.parent.isLevelEnabled(level)) return;
    (this.logger[level] as (...line: unknown[]) => void)(...args);
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }

  error(...args: unknown[]): void {
    this.write('error', args);
  }

  warn(...args: unknown[]): void {
    this.write('warn', args);
  }

  info(...args: unknown[]): void {
    this.write('info', args);
  }

  debug(...args: unknown[]): void {
    this.write('debug', args);
  }

  trace(...args: unknown[]): void {
    this.write('trace', args);
  }

  silent(): void {}

  child(bindings: Record<string, unknown>, options?: object): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/** Must be installed before any other onRequest hook: they run inside the trace. */
export function installTracing(app: FastifyInstance): void {
  app.decorateRequest('trace', undefined as unknown as TraceContext);
  app.setChildLoggerFactory(function (logger, bindings, options, raw) {
    return new RequestLogger(logger as PinoLogger, bindings, options, raw as TracedMessage) as unknown as FastifyBaseLogger;
  });
  app.addHook('onRequest', (request, _reply, done) => {
    request.trace = traceOf(request.raw);
    done();
  });
}

/** nginx's "client closed request": the client went away before its answer was sent. */
const CLIENT_CLOSED_REQUEST = 499;
/** The request was not received in time: its connection closed, answered 408 unless an answer had started (counted as nginx does). */
const REQUEST_TIMEOUT = 408;

export function installRequestMetrics(app: FastifyInstance, metrics: GatewayMetrics): void {
  app.decorateRequest('backendWait', undefined);
  watchRequestEnds(app, {
    count(request, status, ms) {
      // The gateway's own share: what the request did not spend waiting on the backend.
      const ownMs = request.backendWait === undefined ? ms : Math.max(0, ms - request.backendWait.ms());
      metrics.httpRequest(request.routeOptions.url ?? UNMATCHED_ROUTE, request.method, status, ms / 1000, ownMs / 1000);
    },
    cutOff(request, status, ms) {
      const message = status === REQUEST_TIMEOUT ? 'request not received within the request timeout; connection closed' : 'request aborted by the client';
      request.log.info({ req: request, res: { statusCode: status }, responseTime: ms }, message);
    },
  });
}

/** What a listener does with each request once it ends (watchRequestEnds). */
export interface RequestEnds {
  /** Counts a request: answered with `status`, or cut off before its answer (499, 408). */
  count(request: FastifyRequest, status: number, ms: number): void;
  /** A request whose connection closed before its answer was sent: no access line runs for it. */
  cutOff?(request: FastifyRequest, status: number, ms: number): void;
}

/**
 * Counts every request of `app` when it is answered, and one whose connection closed while it
 * waited: that response never finishes, so neither onResponse nor the access line runs; both are
 * done here (the requests a slow upstream makes clients give up on would otherwise leave no trace).
 * The server closes it too, when the request is not received within the request timeout: that one
 * is not the client's doing.
 */
export function watchRequestEnds(app: FastifyInstance, ends: RequestEnds): void {
  function closed(this: WatchedSocket): void {
    const reply = this[IN_FLIGHT];
    if (reply === undefined) return;
    this[IN_FLIGHT] = undefined;
    const ms = reply.elapsedTime;
    const status = this[TIMED_OUT] === true ? REQUEST_TIMEOUT : CLIENT_CLOSED_REQUEST;
    ends.count(reply.request, status, ms);
    ends.cutOff?.(reply.request, status, ms);
  }
  app.addHook('onRequest', (request, reply, done) => {
    const socket = request.raw.socket as WatchedSocket;
    socket[IN_FLIGHT] = reply;
    if (socket[WATCHED] === undefined) {
      socket[WATCHED] = true;
      socket.once('close', closed);
    }
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const socket = request.raw.socket as WatchedSocket;
    if (socket[IN_FLIGHT] === reply) socket[IN_FLIGHT] = undefined;
    ends.count(request, reply.statusCode, reply.elapsedTime);
    done();
  });
}

/**
 * An answer of the router itself (a malformed URL, an over-long path parameter, from
 * `frameworkErrors`): Fastify runs neither the hooks nor the log controller for it, so it is
 * counted (no route matched) and its access line written here, once it is sent.
 */
export function countRouterAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  metrics: GatewayMetrics,
  accessLog: { requestCompleted(error: null, request: FastifyRequest, reply: FastifyReply): void },
): void {
  const started = performance.now();
  reply.raw.once('finish', () => {
    const seconds = (performance.now() - started) / 1000;
    metrics.httpRequest(UNMATCHED_ROUTE, request.method, reply.statusCode, seconds, seconds);
    accessLog.requestCompleted(null, request, reply);
  });
}

/**
 * What the parser's refusals (unreadable-request.ts) need of a listener whose requests
 * watchRequestEnds watches: whether a request of the connection is still in flight (it is counted
 * as aborted when the connection closes), and the count of a refusal answered (no route matched).
 */
export function parserRefusalCounts(answered: (method: string, status: number) => void): Pick<UnreadableEdge, 'answerOwed' | 'timedOut' | 'answered'> {
  return {
    answerOwed: (socket: Duplex) => (socket as WatchedSocket)[IN_FLIGHT] !== undefined,
    timedOut: (socket: Duplex) => {
      const watched = socket as WatchedSocket;
      watched[TIMED_OUT] = true;
      const reply = watched[IN_FLIGHT];
      if (reply === undefined) return {};
      // The routed request is the one cut off only while its body is still arriving (else it is the
      // next one's head, and this request's answer is owed); a response not given the socket yet
      // waits behind an earlier request's.
      const answerable = !reply.request.raw.complete && !reply.raw.headersSent && reply.raw.socket === socket;
      return answerable ? { requestId: reply.request.id } : undefined;
    },
    answered,
  };
}
