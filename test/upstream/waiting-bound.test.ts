/**
 * More calls than the upstream pool can serve: beyond `connections` in flight, only a bounded number
 * (WAITING_PER_CONNECTION per connection) wait for a free connection; the next call fails at once
 * (503 upstream_unavailable with Retry-After, nothing sent) instead of waiting out its whole deadline
 * in the queue, and does not count against the upstream in the circuit breaker. A pool busy with
 * answered calls leaves the instance ready. Counted, never timed: the upstream holds every request
 * until the test releases it.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { BackendError } from '../../src/backend/backend.js';
import { fromBackend } from '../../src/http/problems.js';
import { GatewayMetrics } from '../../src/ops/metrics.js';
import { boundedPing } from '../../src/ops/bounded-ping.js';
import { isPlainObject, parseJsonBody, unreadableAnswer } from '../../src/upstream/answers.js';
import { createUpstreamClient, type UpstreamProtocol } from '../../src/upstream/client.js';
import type { UpstreamOutcome } from '../../src/upstream/observer.js';
import { readAction, writeAction } from '../../src/upstream/policy.js';
import { WhmcsConfigSchema } from '../../mappings/whmcs/config.js';
import { createWhmcsBackend } from '../../mappings/whmcs/backend.js';
import { startWhmcsSimulator } from '../../simulators/whmcs/server.js';
import { whmcsSimulatorConfig } from '../../simulators/whmcs/sandbox.js';
import { createSeedState } from '../../simulators/whmcs/fixtures.js';

/** An upstream that holds every request until `release()`; `received` lists the paths that reached it. */
async function holdingUpstream() {
  const held: ServerResponse[] = [];
  const received: string[] = [];
  let arrived: (() => void) | undefined;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    received.push(String(request.url));
    held.push(response);
    arrived?.();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    /** Resolves once `count` requests have reached the upstream. */
    reached: (count: number) =>
      new Promise<void>((resolve) => {
        const check = () => received.length >= count && resolve();
        arrived = check;
        check();
      }),
    release: () => {
      for (const response of held.splice(0)) response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What `call` failed with, if it failed before the next turn of the event loop: at once, nothing awaited but itself. */
async function settledAtOnce(call: Promise<unknown>): Promise<unknown> {
  call.catch(() => undefined);
  const next = new Promise((resolve) => setImmediate(resolve, 'still waiting'));
  return Promise.race([call.then(() => 'answered', (error: unknown) => error), next]);
}

type Id = 'ping' | 'list' | 'create';
const protocol: UpstreamProtocol<Id, Record<string, string>, Record<string, unknown>> = {
  label: 'Toy',
  actions: { ping: readAction('ping', 5_000), list: readAction('list', 5_000), create: writeAction('create', 5_000) },
  probe: 'ping',
  probeParams: {},
  request: (action, params) => ({ method: action.safety === 'write' ? 'POST' : 'GET', path: `/${action.name}?${new URLSearchParams(params)}`, headers: {} }),
  callKey: (action, params) => `${action.name}?${new URLSearchParams(params)}`,
  read(action, { statusCode, body }) {
    const parsed = parseJsonBody(body);
    if (statusCode !== 200 || !isPlainObject(parsed)) throw unreadableAnswer('Toy', action, `HTTP ${statusCode}`, (text) => text);
    return parsed;
  },
  redact: (text) => text,
};

t.test('a pool of 1 connection: 4 calls wait, the 6th fails at once, unsent, and the breaker stays closed', async (t) => {
  const upstream = await holdingUpstream();
  const outcomes: UpstreamOutcome[] = [];
  const states: string[] = [];
  const client = createUpstreamClient(protocol, {
    origin: upstream.origin,
    connections: 1,
    connectTimeoutMs: 5_000,
    maxResponseBytes: 1024,
    // Opens at the first down-signal: a refusal counted as one would show here.
    circuitBreaker: { enabled: true, failureThreshold: 1, openMs: 60_000 },
    observer: { called: (_action, outcome) => outcomes.push(outcome), cacheLookup() {}, coalesced() {}, breakerState: (state) => states.push(state) },
  });
  t.teardown(async () => {
    upstream.release();
    await client.close();
    await upstream.close();
  });
  // Five distinct reads (none coalesced): one on the connection, four waiting for it.
  const admitted = [1, 2, 3, 4, 5].map((page) => client.call('list', { page: String(page) }));
  await upstream.reached(1);
  const refused = await settledAtOnce(client.call('list', { page: '6' }));
  assert.ok(refused instanceof BackendError, String(refused));
  assert.equal(refused.kind, 'unavailable');
  assert.equal(refused.outcomeUnknown, false, 'nothing was sent');
  assert.deepEqual(upstream.received, ['/list?page=1'], 'refused while only the first had reached the upstream');
  const problem = fromBackend(refused);
  assert.equal(problem.status, 503);
  assert.equal(problem.reason, 'upstream_unavailable');
  assert.ok(Number(problem.headers['retry-after']) >= 1, `Retry-After: ${problem.headers['retry-after']}`);
  // A write is refused the same way, before anything is sent (its Idempotency-Key is free again).
  const write = await settledAtOnce(client.call('create', {}));
  assert.ok(write instanceof BackendError && write.kind === 'unavailable' && !write.outcomeUnknown, String(write));
  assert.deepEqual(outcomes, ['queue_full', 'queue_full']);

  // The upstream answers: every admitted call gets its answer, and the breaker never opened.
  for (let sent = 1; sent <= 5; sent += 1) {
    await upstream.reached(sent);
    upstream.release();
  }
  assert.equal((await Promise.all(admitted)).length, 5);
  assert.deepEqual(upstream.received.sort(), ['/list?page=1', '/list?page=2', '/list?page=3', '/list?page=4', '/list?page=5']);
  assert.deepEqual(states, [], 'no state change: the refusals are not down-signals');
  // Room again: the next call is sent.
  const next = client.call('list', { page: '7' });
  await upstream.reached(6);
  upstream.release();
  assert.deepEqual(await next, { ok: true });
});

t.test('the refusals are counted, from 0', async () => {
  const metrics = new GatewayMetrics();
  const observer = metrics.upstream('toy');
  const shed = async () => (await metrics.registry.getSingleMetricAsString('gateway_upstream_calls_shed_total')).split('\n').filter((line) => !line.startsWith('#'));
  assert.deepEqual(await shed(), ['gateway_upstream_calls_shed_total{backend="toy"} 0']);
  observer.called('list', 'queue_full', 0);
  assert.deepEqual(await shed(), ['gateway_upstream_calls_shed_total{backend="toy"} 1']);
  const calls = await metrics.registry.getSingleMetricAsString('gateway_upstream_requests_total');
  assert.match(calls, /gateway_upstream_requests_total\{backend="toy",action="list",outcome="queue_full"\} 1/);
  const durations = await metrics.registry.getSingleMetricAsString('gateway_upstream_request_duration_seconds');
  assert.doesNotMatch(durations, /action="list"/, 'nothing was sent: no duration');
});

t.test('WHMCS: a pool full of calls in flight leaves the health ping up (readiness), and refuses the next call at once', async (t) => {
  const simulator = await startWhmcsSimulator({ host: '127.0.0.1', seed: createSeedState });
  // Invoice lists take long; the health probe (GetCurrencies) answers at once.
  simulator.inject({ kind: 'latency', ms: 60_000, action: 'GetInvoices' });
  const backend = createWhmcsBackend(WhmcsConfigSchema.parse({ ...whmcsSimulatorConfig(simulator), connections: 1, timeoutMs: 3_000 }));
  t.teardown(async () => {
    await simulator.close();
    await backend.close();
  });
  const customer = { accountId: 'acme', upstreamId: '1' };
  const context = { requestId: 'overload' };
  const pending = [1, 2, 3, 4, 5].map((page) => backend.listInvoices(customer, { page, perPage: 10 }, context).catch(() => undefined));
  while (simulator.calls.filter((call) => call.action === 'getinvoices').length < 1) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(await boundedPing(() => backend.ping()), true, 'the upstream answers the calls it has: the instance stays ready');
  const refused = await settledAtOnce(backend.listInvoices(customer, { page: 6, perPage: 10 }, context));
  assert.ok(refused instanceof BackendError && refused.kind === 'unavailable', String(refused));
  assert.equal(simulator.calls.filter((call) => call.action === 'getinvoices').length, 1, 'only the first reached WHMCS');
  void pending;
});

t.test('v1 passthrough: a pool of 1 connection: 4 forwards wait, the 6th is refused before any of them is answered; /v1/health stays up', async (t) => {
  const { buildPassthroughGateway, json, SERVICE } = await import('../mappings/v1/harness.js');
  const { bearer } = await import('../helpers/gateway.js');
  const gw = await buildPassthroughGateway({ v1: { connections: 1, timeoutMs: 10_000 } });
  const held: Array<() => void> = [];
  gw.upstream.answer((request, response, socket) => {
    if (request.url.endsWith('/v1/health')) return json(200, { status: 'ok' })(request, response, socket);
    held.push(() => json(200, SERVICE)(request, response, socket));
  });
  t.teardown(async () => {
    for (const answer of held.splice(0)) answer();
    await gw.close();
  });
  const get = () => gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:all']) });
  const answered: number[] = [];
  const admitted = [1, 2, 3, 4, 5].map((n) => get().then((response) => (answered.push(n), response)));
  while (gw.upstream.received.length < 1) await new Promise((resolve) => setImmediate(resolve));
  const refused = await get();
  assert.equal(refused.statusCode, 503);
  assert.equal(refused.json().reason, 'upstream_unavailable');
  assert.ok(Number(refused.headers['retry-after']) >= 1, `Retry-After: ${refused.headers['retry-after']}`);
  assert.deepEqual(answered, [], 'refused before any admitted forward was answered (not after waiting out its deadline)');
  assert.equal(gw.upstream.received.length, 1, 'only the first reached the upstream');
  const health = await gw.app.inject({ method: 'GET', url: '/v1/health' });
  assert.equal(health.statusCode, 200, 'every connection busy with answered forwards: healthy');
  while (answered.length < 5) {
    for (const answer of held.splice(0)) answer();
    await new Promise((resolve) => setImmediate(resolve));
  }
  for (const response of await Promise.all(admitted)) assert.equal(response.statusCode, 200);
  assert.equal(gw.upstream.received.length, 5);
});
