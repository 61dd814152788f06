/**
 * pino options for the application log. Secrets never reach it: the Authorization header is not
 * logged at all, query strings are logged with their values masked, path segments and an
 * X-Request-Id that look like a key are replaced (a key may arrive there by mistake), and every
 * field that could hold a secret is redacted wherever it appears. Every text of a line written
 * through pino is bounded and its email addresses masked (logged-text.ts): an upstream's words may
 * quote its customers.
 */
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { pino } from 'pino';
import type { GatewayConfig } from './config.js';
import type { ApiError } from './errors.js';
import { sourceAddress } from './http/source-address.js';
import { boundedLogMethod, loggedError } from './logged-text.js';
import { looksSecret, redactPath } from './secret-like.js';

/** Query parameters whose values are harmless to log: page numbers. */
const LOGGABLE_QUERY = new Set(['page', 'per_page']);
/**
 * A value of those shown as sent: a number. Anything else is masked too: a key sent as `per_page`
 * is refused as any key in the query is (request-gate.ts), and must not be logged either.
 */
const LOGGABLE_VALUE = /^\d{1,12}$/;

/**
 * A parameter name shown in the log: a short word (`access_token`, `filter`), which tells the
 * operator what a client tried. Anything else may be a secret sent as a bare name (`?rk_…`, or a
 * token pasted after `&`): keys and tokens are longer and hold digits.
 */
const SHOWN_NAME = /^[A-Za-z][A-Za-z_.-]{0,31}$/;

function redactUrl(url: string): string {
  const index = url.indexOf('?');
  if (index === -1) return redactPath(url);
  const params = new URLSearchParams(url.slice(index + 1));
  const masked = [...params.keys()].map((name) => {
    const value = params.get(name) ?? '';
    if (LOGGABLE_QUERY.has(name) && (value === '' || LOGGABLE_VALUE.test(value))) return `${name}=${value}`;
    return SHOWN_NAME.test(name) ? `${name}=[redacted]` : '[redacted]';
  });
  return `${redactPath(url.slice(0, index))}?${masked.join('&')}`;
}

/** The client's X-Request-Id as logged (`client_request_id`): a key or token pasted there is not. */
function clientRequestId(headers: Record<string, unknown>): unknown {
  const id = headers['x-request-id'];
  return typeof id === 'string' && looksSecret(id) ? '[redacted]' : id;
}

/** The names of the config's and the upstreams' secrets (a Redis URL may hold a password), at the top and one level down. */
const SECRET_NAMES = ['password', 'secret', 'identifier', 'accesskey', 'accessKey', 'pepper', 'authorization', 'key', 'token', 'apiToken', 'apiKey', 'apiKeys', 'encryptionKey', 'previousPeppers', 'previousEncryptionKeys', 'redisUrl'];

const REDACT_PATHS = [
  ...SECRET_NAMES,
  ...SECRET_NAMES.map((name) => `*.${name}`),
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
];

/**
 * Lines leave in writes of at least this many bytes (and at least once a second). Each write is a
 * system call costing tens of µs here, whatever its size up to this: at 4 KB they took 3 % of a
 * request's CPU under load. 16 KB stays well below a pipe's buffer (64 KB on Linux), so one write
 * to a container's stdout does not wait on its reader.
 */
const BATCH_BYTES = 16_384;
const FLUSH_INTERVAL_MS = 1_000;

/**
 * Standard output, written in batches: one write for several lines under load instead of one or
 * more per request. A line waits at most a second; what is gathered is written when the process
 * exits, lost only if it is killed outright.
 *
 * The lines are gathered here and each batch is written at once, synchronously, by pino's
 * destination (sonic-boom): one write of ~16 KB per fifty requests. Not sonic-boom's own batching:
 * it measures the UTF-8 length of its whole pending buffer at every line it is given (more than
 * the line costs), and in its asynchronous mode a flush at exit writes what it holds ahead of a
 * write still in flight, so the last lines of a process could come out before earlier ones.
 */
function batchedStdout(): pino.DestinationStream {
  const destination = pino.destination({ dest: 1, sync: true });
  let pending: string[] = [];
  let pendingLength = 0;
  const handOver = () => {
    if (pending.length === 0) return;
    const batch = pending.join('');
    pending = [];
    pendingLength = 0;
    destination.write(batch);
  };
  process.on('beforeExit', handOver);
  process.on('exit', handOver);
  setInterval(handOver, FLUSH_INTERVAL_MS).unref();
  return {
    write(line: string) {
      pending.push(line);
      // Characters, not bytes: a batch of multi-byte text leaves a little later, nothing more.
      pendingLength += line.length;
      if (pendingLength >= BATCH_BYTES) handOver();
    },
    flush(callback?: (error?: Error) => void) {
      handOver();
      destination.flush(callback);
    },
    flushSync() {
      handOver();
      destination.flushSync();
    },
  } as pino.DestinationStream;
}

export function loggerOptions(config: Pick<GatewayConfig, 'logLevel'>, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    hooks: { logMethod: boundedLogMethod },
    serializers: {
      err: loggedError,
      req(request: { method: string; url: string; ip?: string; headers: Record<string, unknown> }) {
        return {
          method: request.method,
          url: redactUrl(request.url),
          remote_address: request.ip === undefined ? undefined : sourceAddress(request as { ip: string }),
          client_request_id: clientRequestId(request.headers),
        };
      },
    },
    stream: stream ?? batchedStdout(),
  } as FastifyServerOptions['logger'];
}

/** Text JSON.stringify writes as it is, between quotes: printable ASCII but `"` and `\`. */
const PLAIN_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * `JSON.stringify(text)`, without the call for text that needs no escape: ids, methods, most URLs
 * and addresses, the access line's fields on every request.
 */
export function jsonText(text: string): string {
  return PLAIN_TEXT.test(text) ? `"${text}"` : JSON.stringify(text);
}

/** The app's logger is pino's, which can tell whether a level is written. */
type AccessLogger = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

const INFO = 30;

/**
 * The access log: one line per request, written when it is answered (`request completed`, with
 * the request, its status and time, request and trace ids, the key and account once known, a
 * problem's reason and why a key was refused), instead of Fastify's two. It is the
 * one line every request writes, so it is written as pino would write it but without pino's
 * pipeline (serializers, redaction), which cost about a sixth of a request's CPU: its
 * fields are fixed and hold no secret (the URL's query masked, no header but the client's request
 * id, replaced when it looks like a key). Same format: level and time, the root logger's bindings,
 * the fields, the message.
 */
export class AccessLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    if (error) {
      reply.log.error({ res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
      return;
    }
    const root = request.server.log as AccessLogger & Record<symbol, unknown>;
    if (!root.isLevelEnabled('info')) return;
    const bindings = root[pino.symbols.chindingsSym] as string;
    const stream = root[pino.symbols.streamSym] as pino.DestinationStream;
    // Built as JSON.stringify would build the object {request_id, trace_id, account_id, key_id, req, res, reason, …, responseTime}
    // (absent values left out), without making the object: this runs on every request. Its numbers
    // are finite (a status, a duration), whose text JSON's is.
    const traceId = request.trace?.traceId;
    // The key and its account, once authenticated: what ties a 429 storm or a run of failures to a reseller.
    const caller = request.caller;
    const requestIdSent = clientRequestId(request.headers);
    const problem = request.problem;
    stream.write(
      `{"level":${INFO},"time":${Date.now()}${bindings},"request_id":${jsonText(request.id)}` +
        (traceId === undefined ? '' : `,"trace_id":${jsonText(traceId)}`) +
        (caller === undefined ? '' : `,"account_id":${jsonText(caller.account.id)},"key_id":${jsonText(caller.key.id)}`) +
        `,"req":{"method":${jsonText(request.method)},"url":${jsonText(redactUrl(request.url))}` +
        `,"remote_address":${jsonText(sourceAddress(request))}` +
        (requestIdSent === undefined ? '' : `,"client_request_id":${JSON.stringify(requestIdSent)}`) +
        `},"res":{"statusCode":${reply.statusCode}}` +
        (problem === undefined ? '' : problemFields(problem)) +
        `,"responseTime":${reply.elapsedTime},"msg":"request completed"}\n`,
    );
  }
}

/** The problem's reason, and the fields it keeps for the operator (why a key was refused, …). */
function problemFields(problem: ApiError): string {
  let text = `,"reason":${jsonText(problem.reason)}`;
  if (problem.logged !== undefined) for (const [name, value] of Object.entries(problem.logged)) text += `,${jsonText(name)}:${jsonText(value)}`;
  return text;
}
