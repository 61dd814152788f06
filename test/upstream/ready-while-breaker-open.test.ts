/**
 * README ("Overload"): "an upstream that hangs with every connection taken shows on /readyz when the
 * breaker opens"; v1 passthrough: "Readiness asks through the breaker, so it reports down at once
 * while the breaker is open". A busy pool must count as "up" only while the breaker is closed: calls
 * admitted before it opened still hold the connections (until their own deadlines), and a ping that
 * takes them for load would report the upstream up while every new call fails fast.
 */
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { BackendError } from '../../src/backend/backend.js';
import { CircuitOpenError } from '../../src/upstream/breaker.js';
import { UpstreamBusyError } from '../../src/upstream/busy.js';
import { isPlainObject, parseJsonBody, unreadableAnswer } from '../../src/upstream/answers.js';
import { createUpstreamClient, type UpstreamProtocol } from '../../src/upstream/client.js';
import { readAction } from '../../src/upstream/policy.js';
import { bearer } from '../helpers/gateway.js';
import { buildPassthroughGateway, json } from '../mappings/v1/harness.js';

type Id = 'ping' | 'slow' | 'quick';
const protocol: UpstreamProtocol<Id, Record<string, string>, Record<string, unknown>> = {
  label: 'Toy',
  actions: { ping: readAction('ping', 5_000), slow: readAction('slow', 10_000), quick: readAction('quick', 300) },
  probe: 'ping',
  probeParams: {},
  request: (action) => ({ method: 'GET', path: `/${action.name}`, headers: {} }),
  callKey: (action) => action.name,
  read(action, { statusCode, body }) {
    const parsed = parseJsonBody(body);
    if (statusCode !== 200 || !isPlainObject(parsed)) throw unreadableAnswer('Toy', action, `HTTP ${statusCode}`, (text) => text);
    return parsed;
  },
  redact: (text) => text,
};

t.test('mapped client: once the breaker is open, a ping is refused by it, not taken as "busy, so up"', async (t) => {
  const held: ServerResponse[] = [];
  const server = createServer((_request, response) => void held.push(response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const states: string[] = [];
  const client = createUpstreamClient(protocol, {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: 1,
    connectTimeoutMs: 5_000,
    maxResponseBytes: 1024,
    circuitBreaker: { enabled: true, failureThreshold: 1, openMs: 60_000 },
    observer: { called() {}, cacheLookup() {}, coalesced() {}, breakerState: (state) => states.push(state) },
  });
  t.teardown(async () => {
    for (const response of held.splice(0)) response.destroy();
    await client.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  // A call that hangs on the one connection (deadline 10 s), and one that waits for it and reaches
  // its deadline: a down-signal, and the breaker opens.
  const slow = client.call('slow', {}).catch((error: unknown) => error);
  const quick = await client.call('quick', {}).catch((error: unknown) => error);
  assert.ok(quick instanceof BackendError && quick.kind === 'unavailable', String(quick));
  assert.deepEqual(states, ['open']);
  // The breaker is open; the slow call still holds the connection.
  const ping = await client.call('ping', {}, { waitForConnection: false }).catch((error: unknown) => error);
  assert.ok(!(ping instanceof UpstreamBusyError), 'an open breaker is not a busy pool: the health ping must not count as answered');
  assert.ok(ping instanceof CircuitOpenError, String(ping));
  void slow;
});

t.test('v1 passthrough: /v1/health is 503 once the breaker opened, even with a forward admitted before still in flight', async (t) => {
  const gw = await buildPassthroughGateway({ v1: { connections: 1, timeoutMs: 1_500, circuitBreaker: { failureThreshold: 1, openMs: 60_000 } } });
  const held: ServerResponse[] = [];
  gw.upstream.answer((request, response, socket) => {
    if (request.url.endsWith('/v1/health')) return json(200, { status: 'ok' })(request, response, socket);
    held.push(response);
  });
  t.teardown(async () => {
    for (const response of held.splice(0)) response.destroy();
    await gw.close();
  });
  const get = () => gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:all']) });
  const first = get();
  while (gw.upstream.received.length < 1) await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, 700));
  // Admitted while the breaker is closed; waits for the connection, its deadline 700 ms after the first's.
  const second = get();
  assert.equal((await first).statusCode, 504, 'the first reached its deadline: a down-signal, the breaker opens');
  const health = await gw.app.inject({ method: 'GET', url: '/v1/health' });
  assert.equal(health.statusCode, 503, 'the breaker is open: readiness reports the upstream down');
  await second;
});
