/** A minimal upstream protocol for the client's tests: GET or POST `/<action>`, a JSON object answered with 200; and a server of it. */
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import { isPlainObject, parseJsonBody, unreadableAnswer } from '../../src/upstream/answers.js';
import { createUpstreamClient, type UpstreamProtocol } from '../../src/upstream/client.js';
import type { ActionTable } from '../../src/upstream/policy.js';

const redact = (text: string) => text;

export function toyProtocol<Id extends string>(actions: ActionTable<Id>, probe: Id): UpstreamProtocol<Id, Record<string, string>, Record<string, unknown>> {
  return {
    label: 'Toy',
    actions,
    probe,
    probeParams: {},
    request: (action) => ({ method: action.safety === 'write' ? 'POST' : 'GET', path: `/${action.name}`, headers: {} }),
    callKey: (action) => action.name,
    read(action, { statusCode, body }) {
      const parsed = parseJsonBody(body);
      if (statusCode !== 200 || !isPlainObject(parsed)) throw unreadableAnswer('Toy', action, `HTTP ${statusCode}`, redact);
      return parsed;
    },
    redact,
  };
}

/**
 * A toy upstream answering with `handler` on a free loopback port, and a client of `connections` to
 * it (its breaker opening after `failureThreshold` down-signals, or none, for `openMs`: a minute by
 * default); both closed at the test's end.
 */
export async function toyUpstream<Id extends string>(
  t: Test,
  protocol: UpstreamProtocol<Id, Record<string, string>, Record<string, unknown>>,
  handler: RequestListener,
  options: { connections: number; failureThreshold?: number; openMs?: number },
) {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { failureThreshold } = options;
  const client = createUpstreamClient(protocol, {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: options.connections,
    connectTimeoutMs: 1_000,
    maxResponseBytes: 65_536,
    circuitBreaker: { enabled: failureThreshold !== undefined, failureThreshold: failureThreshold ?? 5, openMs: options.openMs ?? 60_000 },
  });
  t.teardown(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return client;
}
