import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, problemDocument } from '../errors.js';
import { repeatsHeader } from './header-lines.js';

/**
 * Requests Node cannot parse (oversized headers, a broken request line) never reach Fastify's
 * handlers: answer them as a problem too, with a request id, then close the connection.
 */
export function answerUnreadableRequest(error: Error & { code?: string }, socket: Duplex, typeBase: string): void {
  if (error.code === 'ECONNRESET' || error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || !socket.writable) {
    socket.destroy();
    return;
  }
  const requestId = randomUUID();
  const detail = error.code === 'HPE_HEADER_OVERFLOW' ? 'The request headers are too large.' : 'The request could not be read.';
  const body = JSON.stringify(problemDocument(new ApiError('invalid_request', detail), requestId, typeBase));
  socket.end(
    'HTTP/1.1 400 Bad Request\r\n' +
      'Content-Type: application/problem+json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

/**
 * What Node would otherwise answer itself, bare (no request id, no problem): the listener's options
 * hand both to the app instead. An HTTP/1.1 request without Host is refused by the app (RFC 9112
 * §3.2: 400; `hostRefusal`), and an Expect other than 100-continue is ignored (RFC 9110 §10.1.1
 * allows it) rather than answered 417 by Node: the request is served as if it had none.
 */
export const NODE_HTTP_OPTIONS = { requireHostHeader: false } as const;

export function serveUnknownExpectations(server: Server): void {
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    server.emit('request', request, response);
  });
}

/**
 * `uri-host [":" port]` (RFC 3986 §3.2.2–3.2.3): an IP literal in brackets, or a name or IPv4
 * address of unreserved characters, sub-delims and percent-escapes; empty is valid too.
 */
const HOST_VALUE = /^(?:\[[A-Za-z0-9\-._~!$&'()*+,;=:%]+\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)(?::[0-9]*)?$/;

/**
 * The 400 a request's Host earns (RFC 9112 §3.2): none on HTTP/1.1 (HTTP/1.0 may omit it), more
 * than one line, or a value that is not a host and port. Undefined when it is fine.
 */
export function hostRefusal(raw: IncomingMessage): ApiError | undefined {
  const host = raw.headers.host;
  if (host === undefined) {
    if (raw.httpVersionMajor === 1 && raw.httpVersionMinor === 0) return undefined;
    return new ApiError('invalid_request', 'An HTTP/1.1 request must carry a Host header (RFC 9112 §3.2).');
  }
  if (repeatsHeader(raw.rawHeaders, 'host')) {
    return new ApiError('invalid_request', 'Send one Host header; this request has several (RFC 9112 §3.2).');
  }
  if (!HOST_VALUE.test(host)) {
    return new ApiError('invalid_request', 'The Host header is not a host name or address with an optional port (RFC 9112 §3.2).');
  }
  return undefined;
}
