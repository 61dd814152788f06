/**
 * The JSON body parser of both listeners: Fastify's own (secure-json-parse, poisoned property
 * names refused), behind the two checks it leaves out. JSON exchanged between systems is UTF-8
 * (RFC 8259 §8.1), and Fastify decodes whatever arrives as UTF-8 with a U+FFFD for every byte
 * that is not: a Latin-1 "Müller" was stored as "M\uFFFDller", and `charset=utf-16` was ignored.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest, preParsingHookHandler } from 'fastify';
import { safeParse } from 'fast-content-type-parse';
import { ApiError } from '../errors.js';
import { awaitsContinue } from './expectations.js';
import { repeatsHeader } from './header-lines.js';

/** What a declared charset may be: UTF-8 under its names, or ASCII (UTF-8's subset) for a body that is. */
const UTF8 = new Set(['utf-8', 'utf8']);

/**
 * The `charset` parameter of a Content-Type, lower-cased, quotes and quoted-pairs undone (RFC 9110
 * §5.6.6); undefined when there is none. A header whose parameters do not parse (Fastify still
 * routes `application/json; foo` here) declares none: its bytes must be UTF-8 all the same.
 */
export function declaredCharset(contentType: string | undefined): string | undefined {
  return safeParse(contentType ?? '').parameters.charset?.toLowerCase();
}

/** A JSON escape of a surrogate (`\ud800`): only then can a parsed string hold a lone one. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
/** A surrogate code unit that is not half of a pair (in `u` mode a pair is one code point). */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Whether any string of the parsed value (property names included) holds a lone surrogate. Walked
 * with a stack of its own, not by recursion: a body nested 30 000 deep fits the size limit, and
 * overflowed the call stack here (answered as malformed JSON, whatever it held).
 */
function holdsLoneSurrogate(parsed: unknown): boolean {
  const pending: unknown[] = [parsed];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return true;
    } else if (Array.isArray(value)) {
      // One push each: spreading a long array would pass each item as an argument, on the stack.
      for (const item of value) pending.push(item);
    } else if (value !== null && typeof value === 'object') {
      for (const [name, member] of Object.entries(value)) {
        if (LONE_SURROGATE.test(name)) return true;
        pending.push(member);
      }
    }
  }
  return false;
}

/**
 * A body in a content coding (`Content-Encoding: gzip`, `br`, …) is not read as what it declares:
 * its bytes were parsed as if they were the JSON (a gzipped order was a 400 "not valid UTF-8", a
 * body labelled gzip but sent plain was executed). RFC 9110 §15.5.16: 415, with `Accept-Encoding`
 * naming the codings accepted (§12.5.3): none but identity.
 */
function contentCodingRefusal(header: string | undefined): ApiError | undefined {
  if (header === undefined) return undefined;
  const codings = header.split(',').map((coding) => coding.trim().toLowerCase()).filter((coding) => coding !== '');
  if (codings.every((coding) => coding === 'identity')) return undefined;
  return new ApiError('unsupported_media_type', 'Request bodies must not be content-encoded (Content-Encoding); send the JSON as it is.', {
    headers: { 'accept-encoding': 'identity' },
  });
}

/**
 * What the headers refuse: a content coding, two Content-Type lines (Node reads the first; a
 * proxy or WAF in front may have taken the body as the other), a charset other than UTF-8, or
 * US-ASCII for bytes that are not (decided once the `bytes` are read).
 */
function headerRefusal(request: FastifyRequest, bytes?: Buffer): ApiError | undefined {
  const coded = contentCodingRefusal(request.headers['content-encoding']);
  if (coded) return coded;
  if (repeatsHeader(request.raw.rawHeaders, 'content-type')) {
    return new ApiError('unsupported_media_type', 'Send one Content-Type header; this request has several.');
  }
  const charset = declaredCharset(request.headers['content-type']);
  if (charset !== undefined && !UTF8.has(charset) && !(charset === 'us-ascii' && (bytes === undefined || isAscii(bytes)))) {
    return new ApiError('unsupported_media_type', 'Request bodies must be application/json in UTF-8.');
  }
  return undefined;
}

export function installJsonBodyParser(app: FastifyInstance): void {
  // A client waiting for 100 Continue (expectations.ts) is refused what its headers alone decide
  // before the body is read, so before it sends it; any other request is refused by the parser.
  // Only on routes that take a body: a hook on every route would run on every GET too.
  const refuseBeforeBody: preParsingHookHandler = (request, _reply, payload, done) => {
    const refusal = awaitsContinue(request.raw) && request.headers['content-type'] !== undefined ? headerRefusal(request) : undefined;
    if (refusal) done(refusal);
    else done(null, payload);
  };
  app.addHook('onRoute', (route) => {
    if ([route.method].flat().every((method) => method === 'GET' || method === 'HEAD')) return;
    route.preParsing = [...[route.preParsing ?? []].flat(), refuseBeforeBody];
  });
  // Both listeners refuse poisoned names (`onProtoPoisoning`, `onConstructorPoisoning`: 'error').
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    const refusal = headerRefusal(request, bytes);
    if (refusal) {
      done(refusal, undefined);
      return;
    }
    if (!isUtf8(bytes)) {
      done(new ApiError('invalid_request', 'The request body is not valid UTF-8 (JSON is sent in UTF-8: RFC 8259 §8.1).'), undefined);
      return;
    }
    const text = bytes.toString('utf8');
    parse(request, text, (error, parsed) => {
      // `"\ud800"` is six ASCII bytes, but the string it makes has no UTF-8 form (RFC 8259 §8.2):
      // stored or sent on, it would become U+FFFD, as undecodable bytes would.
      if (!error && SURROGATE_ESCAPE.test(text) && holdsLoneSurrogate(parsed)) {
        done(new ApiError('invalid_request', 'The request body holds a lone UTF-16 surrogate escape (\\ud800-\\udfff), which no UTF-8 text can carry.'), undefined);
        return;
      }
      done(error, parsed);
    });
  });
}
