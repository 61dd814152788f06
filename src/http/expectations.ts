/**
 * The `Expect` header (RFC 9110 §10.1.1), on both listeners. Node answers `100 Continue` itself,
 * before any hook has run, unless a 'checkContinue' listener is installed: a client that waits for
 * it before sending a large body then uploaded the whole body only to be refused 401, 403, 413, 415
 * or 429. Here the 100 goes when the body is first read: Fastify reads it only after the onRequest
 * hooks (Host, key, scope, limits) and the preParsing hooks (an Idempotency-Key where one is
 * required), and after checking the declared length and type. A request refused before that gets
 * its final answer and no 100, and Node closes the connection after it (the client may still send
 * the body). Another expectation is 417, from the request gate, so that it is a problem with a
 * request id like every refusal.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { ApiError } from '../errors.js';

/** What Node would otherwise answer itself, bare: a missing Host is refused by the app (`hostRefusal`). */
export const NODE_HTTP_OPTIONS = { requireHostHeader: false } as const;

/** Requests whose 100 Continue is still owed (until the body is read or the answer is sent). */
const awaitingContinue = new WeakSet<IncomingMessage>();
/** Requests with an expectation other than 100-continue (Node tells them apart: 'checkExpectation'). */
const unmet = new WeakSet<IncomingMessage>();

export function serveExpectations(server: Server): void {
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    awaitingContinue.add(request);
    // Node reads what is left of a refused request's body once its answer is sent: no 100 then.
    request.once('resume', () => {
      awaitingContinue.delete(request);
      if (!response.headersSent) response.writeContinue();
    });
    server.emit('request', request, response);
  });
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    unmet.add(request);
    server.emit('request', request, response);
  });
}

/** Whether the client waits for 100 Continue before it sends the body. */
export function awaitsContinue(raw: IncomingMessage): boolean {
  return awaitingContinue.has(raw);
}

/** The 417 an expectation other than 100-continue earns; undefined when there is none. */
export function expectationRefusal(raw: IncomingMessage): ApiError | undefined {
  if (!unmet.has(raw)) return undefined;
  return new ApiError('expectation_failed', 'The only expectation the gateway meets is `Expect: 100-continue`; send the request without this one.');
}
