import { randomUUID } from 'node:crypto';
import { maxHeaderSize, METHODS, STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, problemDocument } from '../errors.js';
import { repeatsHeader } from './header-lines.js';

/**
 * The longest request target (path and query, as sent) the gateway serves: 414 above it (RFC 9110
 * §15.5.15). No v1 request needs more; below Node's limit on the whole request head, so that a
 * long URL is refused as one, whatever the headers beside it weigh.
 */
export const MAX_TARGET_BYTES = 8192;

/** A method token and its space (RFC 9112 §3): the start of a request line. */
const REQUEST_LINE_START = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+ /;

type ParserError = Error & { code?: string; rawPacket?: unknown; bytesParsed?: number };

/** What the parser had read of the packet it failed in. */
function failedHead(error: ParserError): string {
  const packet = error.rawPacket;
  return Buffer.isBuffer(packet) ? packet.toString('latin1', 0, error.bytesParsed ?? packet.length) : '';
}

/** The refused request's method, for its count: the packet's when it starts a request line, else `unknown`. */
function methodOf(head: string): string {
  const method = REQUEST_LINE_START.exec(head)?.[0].trimEnd();
  return method !== undefined && METHODS.includes(method) ? method : 'unknown';
}

/**
 * Which part of the request head overflowed the parser (Node counts the request line and the
 * headers together): the request line when the packet it failed in starts one and ends no line
 * before the failure. A URL that came in several packets cannot be told apart: then 431, whose
 * detail names both.
 */
function overflowProblem(head: string): ApiError {
  if (REQUEST_LINE_START.test(head) && !head.includes('\r\n')) {
    return new ApiError('uri_too_long', `The request target is longer than the gateway reads (${MAX_TARGET_BYTES} bytes).`);
  }
  return new ApiError('headers_too_large', `The request line and header fields together are larger than the gateway reads (${maxHeaderSize} bytes).`);
}

/** What a listener does around the parser's refusals. */
export interface UnreadableEdge {
  /** Where they are logged: their request id is the one the client was given. */
  log: { info(fields: Record<string, unknown>, message: string): void };
  /**
   * Whether a request of this connection still waits for its answer: the error is then its own
   * (its client closed mid-body) or the next pipelined request's, and any answer written now would
   * be read as that request's. The connection is closed unanswered, and the request counted as aborted.
   */
  answerOwed?(socket: Duplex): boolean;
  /**
   * Marks a connection the request timeout cuts off: its request in flight is the server's timeout,
   * not the client's abort. Says whether the cut-off request may still be answered: with the id of
   * the routed request it is (counted and logged when its connection closes), with no id when none
   * was routed (its head did not arrive); undefined when no answer may be written (one has started,
   * or an earlier request's is still owed).
   */
  timedOut?(socket: Duplex): { requestId?: string } | undefined;
  /** Counts an answered refusal, as every answered request is counted. */
  answered?(method: string, status: number): void;
}

/**
 * Requests Node cannot parse (oversized heads, a broken request line) never reach Fastify's
 * handlers, and no request id exists yet: answer them as a problem too, under an id made here and
 * logged (nothing of the request itself: its head may carry a key), then close the connection.
 */
export function answerUnreadableRequest(error: ParserError, socket: Duplex, typeBase: string, edge: UnreadableEdge): void {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    answerTimeout(socket, typeBase, edge);
    return;
  }
  if (error.code === 'ECONNRESET' || !socket.writable || edge.answerOwed?.(socket) === true) {
    socket.destroy();
    return;
  }
  const requestId = randomUUID();
  const head = failedHead(error);
  const problem = error.code === 'HPE_HEADER_OVERFLOW' ? overflowProblem(head) : new ApiError('invalid_request', 'The request could not be read.');
  edge.log.info({ request_id: requestId, status: problem.status, reason: problem.reason, parser_error: error.code }, 'request refused by the HTTP parser');
  edge.answered?.(methodOf(head), problem.status);
  socket.end(problemResponse(problem, requestId, typeBase));
}

/**
 * The request (its head or its body) did not arrive within the request timeout: answered 408 with
 * `Connection: close` (RFC 9110 §15.5.9), so that a stalled upload is not taken for a crash, when
 * no answer has started on the connection; closed unanswered otherwise. The connection is destroyed
 * once the answer is written: a client that is too slow is not waited for to close it.
 */
function answerTimeout(socket: Duplex, typeBase: string, edge: UnreadableEdge): void {
  const cutOff = edge.timedOut?.(socket);
  if (cutOff === undefined || !socket.writable) {
    socket.destroy();
    return;
  }
  const requestId = cutOff.requestId ?? randomUUID();
  const problem = new ApiError('request_timeout', 'The request did not arrive whole within the request timeout; the connection is closed.');
  if (cutOff.requestId === undefined) {
    edge.log.info({ request_id: requestId, status: problem.status, reason: problem.reason }, 'request head not received within the request timeout');
    edge.answered?.('unknown', problem.status);
  }
  socket.end(problemResponse(problem, requestId, typeBase), () => socket.destroy());
}

/** A whole HTTP/1.1 answer carrying the problem, written on the socket itself: no response object exists for it. */
function problemResponse(problem: ApiError, requestId: string, typeBase: string): string {
  const body = JSON.stringify(problemDocument(problem, requestId, typeBase));
  return (
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? ''}\r\n` +
    'Content-Type: application/problem+json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-Id: ${requestId}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
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

/** The 414 a request target over MAX_TARGET_BYTES earns (the parser let it through); undefined when it is fine. */
export function targetRefusal(raw: IncomingMessage): ApiError | undefined {
  if ((raw.url?.length ?? 0) <= MAX_TARGET_BYTES) return undefined;
  return new ApiError('uri_too_long', `The request target is longer than the gateway reads (${MAX_TARGET_BYTES} bytes).`);
}
