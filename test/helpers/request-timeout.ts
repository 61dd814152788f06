/**
 * A raw client of a listener, and Node's request timeout reported to it as Node's own check does
 * (that check runs every 30 s): for the tests of a request cut off before its answer (408).
 */
import { connect, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** `app` listening on a loopback port, and a raw connection to it with everything it received. */
export async function rawConnection(app: FastifyInstance) {
  const port = Number(new URL(await app.listen({ host: '127.0.0.1', port: 0 })).port);
  const client = connect(port, '127.0.0.1');
  await new Promise((resolve) => client.once('connect', resolve));
  let received = '';
  client.on('data', (chunk) => (received += String(chunk)));
  const closed = new Promise((resolve) => client.once('close', resolve));
  return { client, closed, received: () => received };
}

/** What Node's onRequestTimeout emits for a socket whose request did not arrive in time. */
export function timeOut(app: FastifyInstance, socket: Socket): void {
  app.server.emit('clientError', Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket);
}

/** A raw answer's status line, its head lowercased (each line ending in CRLF), and its JSON body. */
export function parseAnswer(answer: string): { status: string; headers: string; body: Record<string, unknown> } {
  const [head = '', body] = answer.split('\r\n\r\n');
  return { status: head.split('\r\n')[0]!, headers: `${head.toLowerCase()}\r\n`, body: body === undefined || body === '' ? {} : JSON.parse(body) };
}
