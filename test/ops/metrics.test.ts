/**
 * The ops listener after a scenario: /metrics has every family with the counts the scenario made
 * (requests by route template and status, a 429, an idempotent replay, upstream calls, a breaker
 * state change, audit writes, webhook deliveries and the outbox backlog), and the public port
 * serves neither metrics nor probes.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { GatewayMetrics } from '../../src/ops/metrics.js';
import { buildOpsApp } from '../../src/ops/server.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { StoreUnavailableError } from '../../src/stores/types.js';
import { bearer, buildTestGateway, TEST_PEPPER, type TestGateway } from '../helpers/gateway.js';
import { eventually, startReceiver } from '../helpers/webhook-receiver.js';

/** The value of one sample, `name{labels}` with exactly these labels, from the text exposition format. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels)
    .map(([label, value]) => `${label}="${value}"`)
    .sort()
    .join(',');
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = (match[2] ?? '').split(/,(?=[a-zA-Z_]+=")/).filter(Boolean).sort().join(',');
    if (found === wanted) return Number(match[3]);
  }
  return undefined;
}

function families(text: string): Set<string> {
  return new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1] as string));
}

t.test('metrics on the ops listener', async (t) => {
  let gw: TestGateway;
  let ops: FastifyInstance;
  let text: string;
  let upstreamCalls: Map<string, number>;
  /** Statuses of the calls made while the upstream broke the connection, then with the breaker open. */
  let outage: number[];

  t.before(async () => {
    gw = await buildTestGateway({ whmcs: { circuitBreaker: { enabled: true, failureThreshold: 2, openMs: 60_000 } } });
    ops = buildOpsApp(gw.app);
    const { app } = gw;
    const key = gw.keys['acme:all'] as string;
    const get = (url: string, k = key) => app.inject({ method: 'GET', url, headers: bearer(k) });

    for (let i = 0; i < 3; i++) assert.equal((await get('/v1/me')).statusCode, 200);
    assert.equal((await get('/v1/services/999999')).statusCode, 404);
    assert.equal((await app.inject({ method: 'GET', url: '/no/such/path' })).statusCode, 404);

    // A key allowed one request at rest: the second is refused.
    const { key: tight } = await gw.keyService.issue({ accountId: 'acme', name: 'tight', scopes: ['read:products'], rateLimits: { perMinute: 1, burst: 0 } });
    assert.equal((await get('/v1/me', tight)).statusCode, 200);
    assert.equal((await get('/v1/me', tight)).statusCode, 429);

    const order = { method: 'POST' as const, url: '/v1/orders', payload: { product_id: '1', billing_cycle: 'monthly' }, headers: { ...bearer(key), 'idempotency-key': 'metrics-1' } };
    const placed = await app.inject(order);
    assert.equal(placed.statusCode, 201, placed.body);
    const replay = await app.inject(order);
    assert.equal(replay.headers['idempotent-replayed'], 'true');

    assert.equal((await get('/v1/services/1/credentials')).statusCode, 200);

    upstreamCalls = new Map();
    for (const call of gw.simulator.calls) upstreamCalls.set(call.action, (upstreamCalls.get(call.action) ?? 0) + 1);

    // Two reads whose connection broke (on the first attempt and on its retry, before any answer)
    // open the breaker; the next call fails fast.
    gw.simulator.inject({ kind: 'reset', action: 'GetClientsDetails', times: 4 });
    outage = [];
    for (let i = 0; i < 3; i++) outage.push((await get('/v1/me')).statusCode);
    assert.ok(outage.every((status) => status >= 500), String(outage));

    const scrape = await ops.inject({ method: 'GET', url: '/metrics' });
    assert.equal(scrape.statusCode, 200);
    assert.match(String(scrape.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    text = scrape.body;
  });
  t.teardown(async () => {
    await ops.close();
    await gw.close();
  });

  t.test('has every family, all under the gateway_ prefix', async () => {
    const names = families(text);
    for (const family of [
      'gateway_http_requests_total',
      'gateway_http_request_duration_seconds',
      'gateway_http_request_own_duration_seconds',
      'gateway_rate_limit_decisions_total',
      'gateway_rate_limit_decision_duration_seconds',
      'gateway_idempotency_requests_total',
      'gateway_upstream_requests_total',
      'gateway_upstream_request_duration_seconds',
      'gateway_upstream_circuit_breaker_state',
      'gateway_upstream_circuit_breaker_transitions_total',
      'gateway_upstream_cache_lookups_total',
      'gateway_upstream_coalesced_calls_total',
      'gateway_store_errors_total',
      'gateway_store_fallbacks_total',
      'gateway_audit_writes_total',
      'gateway_webhook_deliveries_total',
      'gateway_webhook_outbox_depth',
      'gateway_webhook_outbox_oldest_pending_age_seconds',
      'gateway_process_cpu_seconds_total',
    ]) {
      assert.ok(names.has(family), `${family} missing`);
    }
    assert.deepEqual([...names].filter((name) => !name.startsWith('gateway_')), []);
  });

  t.test('counts requests by route template, method and status (never the raw path)', async () => {
    const me = { method: 'GET', route: '/v1/me' };
    assert.equal(sample(text, 'gateway_http_requests_total', { ...me, status: '200' }), 4);
    assert.equal(sample(text, 'gateway_http_requests_total', { ...me, status: '429' }), 1);
    for (const status of new Set(outage)) {
      const count = outage.filter((each) => each === status).length;
      assert.equal(sample(text, 'gateway_http_requests_total', { ...me, status: String(status) }), count, `status ${status}`);
    }
    assert.equal(sample(text, 'gateway_http_requests_total', { method: 'GET', route: '/v1/services/:id', status: '404' }), 1);
    assert.equal(sample(text, 'gateway_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }), 1);
    assert.equal(sample(text, 'gateway_http_requests_total', { method: 'POST', route: '/v1/orders', status: '201' }), 2);
    assert.equal(sample(text, 'gateway_http_request_duration_seconds_count', { ...me, status: '200' }), 4);
    const routes = new Set([...text.matchAll(/route="([^"]*)"/g)].map((match) => match[1]));
    assert.deepEqual([...routes].sort(), ['/v1/me', '/v1/orders', '/v1/services/:id', '/v1/services/:id/credentials', 'unmatched']);
  });

  t.test("the gateway's own share has a bucket at each added-latency goal (1 and 3 ms): the share within it is one bucket's count", async () => {
    const me = { method: 'GET', route: '/v1/me', status: '200' };
    const bucket = (le: string) => sample(text, 'gateway_http_request_own_duration_seconds_bucket', { ...me, le });
    const answers = sample(text, 'gateway_http_request_own_duration_seconds_count', me);
    assert.equal(answers, 4);
    for (const goal of ['0.001', '0.003']) {
      const within = bucket(goal);
      assert.ok(within !== undefined && within <= (answers as number), `le="${goal}" missing`);
    }
    assert.ok((bucket('0.001') as number) <= (bucket('0.003') as number), 'cumulative');
  });

  t.test('counts rate-limit decisions by policy and outcome', async () => {
    assert.equal(sample(text, 'gateway_rate_limit_decisions_total', { policy: 'key_minute', outcome: 'limited' }), 1);
    assert.ok((sample(text, 'gateway_rate_limit_decisions_total', { policy: 'key_minute', outcome: 'allowed' }) ?? 0) >= 10);
  });

  t.test("times each rate-limit decision once: the store's share of every request's own time", async () => {
    const checked = (policy: string) =>
      (sample(text, 'gateway_rate_limit_decisions_total', { policy, outcome: 'allowed' }) ?? 0) + (sample(text, 'gateway_rate_limit_decisions_total', { policy, outcome: 'limited' }) ?? 0);
    const decisions = sample(text, 'gateway_rate_limit_decision_duration_seconds_count') as number;
    // A decision checks the source IP, a key, or both at once.
    assert.ok(decisions >= checked('ip_minute') && decisions >= checked('key_minute'), `${decisions} decisions timed`);
    assert.ok(decisions <= checked('ip_minute') + checked('key_minute'), `${decisions} decisions timed`);
    assert.ok((sample(text, 'gateway_rate_limit_decision_duration_seconds_sum') as number) > 0);
    assert.equal(sample(text, 'gateway_rate_limit_decision_duration_seconds_bucket', { le: '+Inf' }), decisions);
  });

  t.test('counts idempotency outcomes', async () => {
    assert.equal(sample(text, 'gateway_idempotency_requests_total', { outcome: 'new' }), 1);
    assert.equal(sample(text, 'gateway_idempotency_requests_total', { outcome: 'replayed' }), 1);
  });

  t.test('counts upstream calls by backend, action and outcome, as the upstream received them', async () => {
    // The simulator records action names in lower case; the metrics use the declared names.
    const succeeded = new Map<string, number>();
    for (const match of text.matchAll(/^gateway_upstream_requests_total\{backend="whmcs",action="(\w+)",outcome="success"\} (\d+)$/gm)) {
      succeeded.set((match[1] as string).toLowerCase(), Number(match[2]));
    }
    assert.ok(upstreamCalls.size >= 3, String([...upstreamCalls.keys()]));
    assert.deepEqual(succeeded, upstreamCalls);
    assert.equal(sample(text, 'gateway_upstream_requests_total', { backend: 'whmcs', action: 'GetClientsDetails', outcome: 'upstream_error' }), 2);
    assert.equal(sample(text, 'gateway_upstream_requests_total', { backend: 'whmcs', action: 'GetClientsDetails', outcome: 'circuit_open' }), 1);
    assert.equal(
      sample(text, 'gateway_upstream_request_duration_seconds_count', { backend: 'whmcs', action: 'GetClientsDetails' }),
      (upstreamCalls.get('getclientsdetails') ?? 0) + 2,
    );
  });

  t.test('shows the breaker open, and the change that opened it', async () => {
    assert.equal(sample(text, 'gateway_upstream_circuit_breaker_state', { backend: 'whmcs', state: 'open' }), 1);
    assert.equal(sample(text, 'gateway_upstream_circuit_breaker_state', { backend: 'whmcs', state: 'closed' }), 0);
    assert.equal(sample(text, 'gateway_upstream_circuit_breaker_transitions_total', { backend: 'whmcs', state: 'open' }), 1);
  });

  t.test('counts cache lookups of the cached catalog', async () => {
    const lookups = ['hit', 'stale', 'miss'].map((result) => sample(text, 'gateway_upstream_cache_lookups_total', { backend: 'whmcs', action: 'GetProducts', result }) ?? 0);
    assert.ok(lookups.reduce((a, b) => a + b, 0) >= 1, text);
  });

  t.test('counts each cache lookup once, by backend, action and result', async () => {
    const metrics = new GatewayMetrics();
    const whmcs = metrics.upstream('whmcs');
    const other = metrics.upstream('fossbilling');
    whmcs.cacheLookup('GetProducts', 'hit');
    whmcs.cacheLookup('GetProducts', 'hit');
    whmcs.cacheLookup('GetProducts', 'miss');
    whmcs.cacheLookup('GetCurrencies', 'stale');
    other.cacheLookup('GetProducts', 'hit');
    const exposed = await metrics.registry.metrics();
    const count = (backend: string, action: string, result: string) =>
      sample(exposed, 'gateway_upstream_cache_lookups_total', { backend, action, result });
    assert.equal(count('whmcs', 'GetProducts', 'hit'), 2);
    assert.equal(count('whmcs', 'GetProducts', 'miss'), 1);
    assert.equal(count('whmcs', 'GetProducts', 'stale'), 0);
    assert.equal(count('whmcs', 'GetCurrencies', 'stale'), 1);
    assert.equal(count('fossbilling', 'GetProducts', 'hit'), 1);
    assert.equal(count('fossbilling', 'GetCurrencies', 'hit'), undefined);
  });

  t.test('counts audit writes by outcome', async () => {
    assert.equal(sample(text, 'gateway_audit_writes_total', { outcome: 'returned', result: 'written' }), gw.audit.records.length);
    assert.equal(gw.audit.records.length, 1);
  });

  t.test('probes and the scrape answer HEAD as GET, without the body (load balancers probe with HEAD)', async () => {
    for (const url of ['/metrics', '/livez', '/readyz']) {
      const get = await ops.inject({ method: 'GET', url });
      const head = await ops.inject({ method: 'HEAD', url });
      assert.equal(head.statusCode, get.statusCode, url);
      assert.equal(head.body, '', url);
      assert.equal(head.headers['content-type'], get.headers['content-type'], url);
      assert.equal(head.headers['cache-control'], 'no-store', url);
    }
    assert.equal((await ops.inject({ method: 'HEAD', url: '/livez' })).headers['content-length'], String((await ops.inject({ method: 'GET', url: '/livez' })).rawPayload.length));
  });

  t.test('the public port serves neither metrics nor probes', async () => {
    for (const url of ['/metrics', '/livez', '/readyz']) {
      assert.equal((await gw.app.inject({ method: 'GET', url })).statusCode, 404, url);
    }
  });
});

t.test('store metrics', async (t) => {
  t.test('counts store errors, the rate limiter\'s per-instance fallback and stale key records', async () => {
    const stores = createMemoryStores();
    // Key records are always re-read (1 ms), and stand in for a minute while the store is down.
    const gw = await buildTestGateway({ stores, config: { keys: { pepper: TEST_PEPPER, cacheTtlMs: 1, staleIfErrorMs: 60_000 } } });
    try {
      const down = async (): Promise<never> => {
        throw new StoreUnavailableError('store down (test)');
      };
      Object.assign(stores.rateLimits, { hit: down });
      const key = gw.keys['acme:all'] as string;
      assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) })).statusCode, 200);
      Object.assign(stores.keys, { getKey: down });
      // A key this process has not seen yet: its record must come from the store.
      const fresh = await gw.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(gw.keys['beta:all']) });
      assert.equal(fresh.statusCode, 503, fresh.body);
      await new Promise((resolve) => setTimeout(resolve, 5));
      assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) })).statusCode, 200, 'served from the stale record');

      const ops = buildOpsApp(gw.app);
      const text = (await ops.inject({ method: 'GET', url: '/metrics' })).body;
      await ops.close();
      const errors = sample(text, 'gateway_store_errors_total', { store: 'rate_limits' }) ?? 0;
      assert.ok(errors >= 2, text);
      assert.equal(sample(text, 'gateway_store_fallbacks_total', { store: 'rate_limits', fallback: 'memory' }), errors);
      assert.equal(sample(text, 'gateway_store_errors_total', { store: 'keys' }), 2);
      assert.equal(sample(text, 'gateway_store_fallbacks_total', { store: 'keys', fallback: 'stale' }), 1);
    } finally {
      await gw.close();
    }
  });
});

t.test('webhook metrics', async (t) => {
  t.test('counts delivery attempts by outcome and shows the outbox backlog', async () => {
    const receiver = await startReceiver();
    // Retries after 30 ms, 30 ms, then a minute (no jitter): an event refused three times is still waiting.
    const webhooks = { allowPrivateTargets: true, workerIntervalMs: 20, pollIntervalMs: 600_000, retryScheduleMs: [0, 30, 30, 60_000], retryJitter: 0 };
    const gw = await buildTestGateway({ runWebhooks: true, config: { webhooks } });
    const ops = buildOpsApp(gw.app);
    const scrape = async () => (await ops.inject({ method: 'GET', url: '/metrics' })).body;
    try {
      const put = async (account: string, url: string) => {
        const set = await gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers: bearer(gw.keys[`${account}:all`]), payload: { url } });
        assert.equal(set.statusCode, 200, set.body);
      };
      const attemptsOf = (id: string) => receiver.received.filter((r) => r.headers['webhook-id'] === id).length;
      // acme's first webhook.test: refused twice, then taken. Its second: refused every time.
      // beta's endpoint answers 410: disabled, the event failed.
      let first: string | undefined;
      receiver.answer = (r) => {
        if (String(r.event.data?.url).endsWith('/beta')) return { status: 410 };
        first ??= String(r.headers['webhook-id']);
        return r.headers['webhook-id'] === first && attemptsOf(first) >= 3 ? { status: 200 } : { status: 503 };
      };
      await put('acme', receiver.url);
      await receiver.waitFor((r) => r.headers['webhook-id'] === first && attemptsOf(first ?? '') === 3, 'the third attempt of the first event');
      await put('acme', receiver.url);
      await put('beta', `${receiver.url}/beta`);

      const expected = { delivered: 1, retrying: 5, failed: 1, blocked: 0 };
      const text = await eventually(async () => {
        const current = await scrape();
        const settled = Object.entries(expected).every(([outcome, count]) => (sample(current, 'gateway_webhook_deliveries_total', { outcome }) ?? 0) === count);
        return settled && sample(current, 'gateway_webhook_outbox_depth') === 1 ? current : undefined;
      }, 'the deliveries settle');
      assert.equal(sample(text, 'gateway_webhook_deliveries_total', { outcome: 'blocked' }), 0, 'nothing was blocked');
      assert.equal(sample(text, 'gateway_webhook_endpoints_disabled_total', { reason: 'gone' }), 1, "beta's endpoint, disabled for its 410");
      assert.equal(sample(text, 'gateway_webhook_endpoints_disabled_total', { reason: 'failing' }), 0);
      const age = sample(text, 'gateway_webhook_outbox_oldest_pending_age_seconds') ?? -1;
      assert.ok(age >= 0.06 && age < 30, `the waiting event was enqueued before its two 30 ms retries: ${age}`);
      assert.equal(receiver.received.length, 3 + 3 + 1, 'acme: 3 + 3 attempts, beta: 1');
    } finally {
      await ops.close();
      await gw.close();
      await receiver.close();
    }
  });
});
