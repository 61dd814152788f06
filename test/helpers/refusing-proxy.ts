/**
 * A real socket in front of an upstream simulator: every answer closes its connection, so each call
 * connects anew, and the proxy can stop listening right after it answered given calls. The next
 * call is then refused (ECONNREFUSED): nothing of it reached the upstream.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RefusingProxy {
  url: string;
  /** Calls forwarded, by name (WHMCS `action`, FOSSBilling `module/method`). */
  forwarded: string[];
  /** Calls answered, by name, in the order their answers were sent. */
  answered: string[];
  /** Stops listening once every call named has been answered (each counted once). */
  refuseAfter(calls: readonly string[]): void;
  /** Listens again on the same port. */
  reopen(): Promise<void>;
  close(): Promise<void>;
}

function callName(request: IncomingMessage, body: string): string {
  const path = new URL(request.url ?? '/', 'http://proxy.invalid').pathname;
  const api = /\/api\/admin\/(.+)$/.exec(path);
  if (api) return api[1] as string;
  return new URLSearchParams(body).get('action') ?? path;
}

export async function startRefusingProxy(target: string): Promise<RefusingProxy> {
  const forwarded: string[] = [];
  const answered: string[] = [];
  let waitingFor: string[] | null = null;
  let port = 0;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const name = callName(request, body);
      forwarded.push(name);
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries(request.headers)) {
        if (typeof value === 'string' && !['host', 'connection', 'content-length', 'transfer-encoding'].includes(key)) headers[key] = value;
      }
      void fetch(`${target}${request.url ?? '/'}`, { method: request.method ?? 'POST', headers, ...(body === '' ? {} : { body }) })
        .then(async (answer) => {
          const text = Buffer.from(await answer.arrayBuffer());
          response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json', connection: 'close' });
          response.end(text);
          answered.push(name);
          if (waitingFor !== null) {
            const index = waitingFor.indexOf(name);
            if (index >= 0) waitingFor.splice(index, 1);
            if (waitingFor.length === 0) {
              waitingFor = null;
              server.close();
            }
          }
        })
        .catch((error: unknown) => {
          response.destroy(error as Error);
        });
    });
  });
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  await listen();
  return {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    forwarded,
    answered,
    refuseAfter(calls) {
      waitingFor = [...calls];
    },
    reopen: listen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        if (!server.listening) resolve();
        else server.close(() => resolve());
      }),
  };
}
