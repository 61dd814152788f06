/**
 * The JSON body parser of both listeners: Fastify's own (secure-json-parse, poisoned property
 * names refused), behind the two checks it leaves out. JSON exchanged between systems is UTF-8
 * (RFC 8259 §8.1), and Fastify decodes whatever arrives as UTF-8 with a U+FFFD for every byte
 * that is not: a Latin-1 "Müller" was stored as "M\uFFFDller", and `charset=utf-16` was ignored.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';

/** What a declared charset may be: UTF-8 under its names, or ASCII (UTF-8's subset) for a body that is. */
const UTF8 = new Set(['utf-8', 'utf8']);

/** The `charset` parameter of a Content-Type, lower-cased and unquoted; undefined when there is none. */
export function declaredCharset(contentType: string | undefined): string | undefined {
  for (const parameter of (contentType ?? '').split(';').slice(1)) {
    const at = parameter.indexOf('=');
    if (at < 0 || parameter.slice(0, at).trim().toLowerCase() !== 'charset') continue;
    return parameter.slice(at + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
  }
  return undefined;
}

export function installJsonBodyParser(app: FastifyInstance): void {
  // Both listeners refuse poisoned names (`onProtoPoisoning`, `onConstructorPoisoning`: 'error').
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    const charset = declaredCharset(request.headers['content-type']);
    if (charset !== undefined && !UTF8.has(charset) && !(charset === 'us-ascii' && isAscii(bytes))) {
      done(new ApiError('unsupported_media_type', 'Request bodies must be application/json in UTF-8.'), undefined);
      return;
    }
    if (!isUtf8(bytes)) {
      done(new ApiError('invalid_request', 'The request body is not valid UTF-8 (JSON is sent in UTF-8: RFC 8259 §8.1).'), undefined);
      return;
    }
    parse(request, bytes.toString('utf8'), done);
  });
}
