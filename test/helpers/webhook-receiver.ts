/**
 * A reseller's webhook endpoint for tests: a real HTTP server on loopback that keeps every request
 * and answers what the test says (200 by default).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { listen } from '../../simulators/shared/listen.js';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  /** The parsed payload. */
  event: { type: string; timestamp: string; data: any };
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
}

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** What to answer the next requests with: a status, or a header set too (redirects); a promise holds the answer back. */
  answer: (request: ReceivedWebhook) => Answer | Promise<Answer>;
  /** Waits (bounded) until a request matches. */
  waitFor(match: (request: ReceivedWebhook) => boolean, what: string, timeoutMs?: number): Promise<ReceivedWebhook>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: ReceivedWebhook[] = [];
  const receiver = { received, answer: () => ({ status: 200 }) } as unknown as Receiver;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let event: ReceivedWebhook['event'];
      try {
        event = JSON.parse(body) as ReceivedWebhook['event'];
      } catch {
        event = { type: '(unparsable)', timestamp: '', data: null };
      }
      const entry = { headers: request.headers, body, event };
      received.push(entry);
      void Promise.resolve(receiver.answer(entry)).then(({ status, headers }) => {
        if (!response.destroyed) response.writeHead(status, headers).end('ok');
      });
    });
  });
  const listening = await listen(server, '127.0.0.1', 0);
  receiver.url = `${listening.url}/hooks`;
  receiver.port = listening.port;
  receiver.waitFor = async (match, what, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const found = received.find(match);
      if (found) return found;
      await sleep(20);
    }
    throw new Error(`no webhook ${what} within ${timeoutMs} ms; received: ${received.map((r) => r.event.type).join(', ')}`);
  };
  receiver.close = () => listening.close();
  return receiver;
}

/** Verifies a delivery the way a reseller would, with the official library; returns the payload. */
export function verify(secret: string, delivery: ReceivedWebhook): unknown {
  return new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
}

/** Waits (bounded) until `check` returns a value. */
export async function eventually<T>(check: () => Promise<T | undefined | false>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    await sleep(20);
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}
