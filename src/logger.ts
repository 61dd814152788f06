/**
 * pino options for the application log. Secrets never reach it: the Authorization header is not
 * logged at all, query strings are logged with their values masked (a key may arrive there by
 * mistake), and every field that could hold a secret is redacted wherever it appears.
 */
import type { FastifyServerOptions } from 'fastify';
import type { GatewayConfig } from './config.js';
import { currentTrace } from './ops/trace.js';

/** Marks a request's logger, whose lines carry the trace id as a binding already. */
export const REQUEST_LOGGER = Symbol('requestLogger');

/**
 * Adds the trace id to lines written by shared loggers (the backend's, the upstream client's)
 * while they work for a request. A new object every time: pino merges the line into it.
 */
function traceMixin(_line: object, _level: number, logger: object): object {
  if ((logger as Record<symbol, unknown>)[REQUEST_LOGGER] === true) return {};
  const trace = currentTrace();
  return trace === undefined ? {} : { trace_id: trace.traceId };
}

/** Query parameters whose values are harmless to log. */
const LOGGABLE_QUERY = new Set(['page', 'per_page']);

function redactUrl(url: string): string {
  const index = url.indexOf('?');
  if (index === -1) return url;
  const params = new URLSearchParams(url.slice(index + 1));
  const masked = [...params.keys()].map((name) =>
    LOGGABLE_QUERY.has(name) ? `${name}=${encodeURIComponent(params.get(name) ?? '')}` : `${encodeURIComponent(name)}=[redacted]`,
  );
  return `${url.slice(0, index)}?${masked.join('&')}`;
}

const REDACT_PATHS = [
  'password',
  'secret',
  'identifier',
  'accesskey',
  'accessKey',
  'pepper',
  'authorization',
  'key',
  '*.password',
  '*.secret',
  '*.identifier',
  '*.accesskey',
  '*.accessKey',
  '*.pepper',
  '*.authorization',
  '*.key',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
];

export function loggerOptions(config: Pick<GatewayConfig, 'logLevel'>, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    mixin: traceMixin,
    serializers: {
      req(request: { method: string; url: string; ip?: string; headers: Record<string, unknown> }) {
        return {
          method: request.method,
          url: redactUrl(request.url),
          remote_address: request.ip,
          client_request_id: request.headers['x-request-id'],
        };
      },
    },
    ...(stream ? { stream } : {}),
  } as FastifyServerOptions['logger'];
}
