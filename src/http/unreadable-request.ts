import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { ApiError, problemDocument } from '../errors.js';

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
