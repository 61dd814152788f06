/**
 * A stale cached answer is served while one refresh runs; a refresh that fails is logged. One the
 * full pool refused (UpstreamBusyError) fails at once, so under a flood every stale read starts a
 * new refresh, refused again: a warning per request for as long as the overload lasts, each about
 * a refusal already counted in gateway_upstream_calls_shed_total. As for the open breaker's
 * refusals (client.ts), none is logged.
 */
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { isPlainObject, parseJsonBody, unreadableAnswer } from '../../src/upstream/answers.js';
import { createUpstreamClient, type UpstreamProtocol } from '../../src/upstream/client.js';
import { readAction } from '../../src/upstream/policy.js';

type Id = 'ping' | 'list' | 'catalog';
const protocol: UpstreamProtocol<Id, Record<string, string>, Record<string, unknown>> = {
  label: 'Toy',
  actions: { ping: readAction('ping', 5_000), list: readAction('list', 2_000), catalog: readAction('catalog', 5_000, 1_000) },
  probe: 'ping',
  probeParams: {},
  request: (action, params) => ({ method: 'GET', path: `/${action.name}?${new URLSearchParams(params)}`, headers: {} }),
  callKey: (action, params) => `${action.name}?${new URLSearchParams(params)}`,
  read(action, { statusCode, body }) {
    const parsed = parseJsonBody(body);
    if (statusCode !== 200 || !isPlainObject(parsed)) throw unreadableAnswer('Toy', action, `HTTP ${statusCode}`, (text) => text);
    return parsed;
  },
  redact: (text) => text,
};

t.test('stale reads whose refresh the full pool refuses are served without a warning each', async (t) => {
  const held: ServerResponse[] = [];
  let listsReceived = 0;
  const server = createServer((request, response) => {
    if (String(request.url).startsWith('/catalog')) {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"products":[]}');
      return;
    }
    listsReceived += 1;
    held.push(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  let clock = 1_000_000;
  const warnings: string[] = [];
  const client = createUpstreamClient(protocol, {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: 1,
    connectTimeoutMs: 5_000,
    maxResponseBytes: 1024,
    circuitBreaker: { enabled: true, failureThreshold: 5, openMs: 60_000 },
    now: () => clock,
    logger: { warn: (_line: object, msg: string) => void warnings.push(msg), error: () => undefined },
  });
  t.teardown(async () => {
    for (const response of held.splice(0)) response.destroy();
    await client.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  assert.deepEqual(await client.call('catalog', {}), { products: [] });
  clock += 1_500; // past the TTL: served stale while a refresh runs
  // The pool full: one call on the connection, four waiting.
  const lists = [1, 2, 3, 4, 5].map((page) => client.call('list', { page: String(page) }).catch(() => undefined));
  while (listsReceived < 1) await new Promise((resolve) => setImmediate(resolve));
  for (let read = 0; read < 20; read += 1) {
    assert.deepEqual(await client.call('catalog', {}), { products: [] }, 'the stale answer is served');
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.deepEqual(
    warnings.filter((msg) => msg.includes('refresh failed')),
    [],
    'a refresh refused unsent by the full pool is counted (queue_full), not logged at every stale read',
  );
  void lists;
});
