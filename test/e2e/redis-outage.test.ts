/**
 * A Redis outage, on the gateway's own redis-server stopped (and frozen) mid-run: keys this instance
 * has seen keep serving reads, a key never seen answers 503, writes answer 503 and send nothing
 * upstream, nothing hangs, and everything recovers once Redis is back. The credentials audit holds
 * exactly one record per request in every outcome, before and during the outage. And the health
 * probe answers in bounded time whatever its dependencies do.
 */
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import t from 'tap';
import type { AuditRecord } from '../../src/audit.js';
import { startWhmcsSimulator, type WhmcsSimulator } from '../../simulators/whmcs/server.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import type { AccountRecord, ApiKeyRecord } from '../../src/stores/types.js';
import { bearer, buildTestGateway, TEST_PEPPER, type TestGateway } from '../helpers/gateway.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';

/**
 * Longer than any answer may take while Redis is down or frozen (a write meets at most three store
 * calls, each cut off within a second): past it, the request hung.
 */
const HANG_MS = 8_000;
/** The key cache is short here so that the outage outlives it at once. */
const CACHE_TTL_MS = 100;

async function within<T>(what: string, work: Promise<T>, ms = HANG_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Expected {
  status: number;
  reason: AuditRecord['reason'];
  keyId: string | null;
  accountId: string | null;
}

function send(gw: TestGateway, method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: unknown) {
  return within(
    `${method} ${url}`,
    gw.app.inject({
      method,
      url,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    }),
  );
}

function outcomeOf(status: number): AuditRecord['outcome'] {
  if (status === 200) return 'returned';
  if (status === 404) return 'not_found';
  return status === 401 || status === 403 ? 'denied' : 'failed';
}

/** One credentials call: its answer, and exactly one audit record for it, naming its outcome. */
async function audited(gw: TestGateway, url: string, headers: Record<string, string>, expected: Expected): Promise<void> {
  const before = gw.audit.records.length;
  const response = await send(gw, 'GET', url, headers);
  assert.equal(response.statusCode, expected.status, `${url}: ${response.body}`);
  if (expected.reason !== null) assert.equal(response.json().reason, expected.reason);
  const requestId = response.headers['x-request-id'];
  const records = gw.audit.records.filter((record) => record.request_id === requestId);
  assert.equal(records.length, 1, `one audit record for ${url} (${expected.status})`);
  assert.equal(gw.audit.records.length, before + 1, 'no other record was written');
  const [record] = records as [AuditRecord];
  assert.equal(record.status, expected.status);
  assert.equal(record.reason, expected.reason);
  assert.equal(record.key_id, expected.keyId);
  assert.equal(record.account_id, expected.accountId);
  assert.equal(record.source_ip, '127.0.0.1');
  assert.ok(url.startsWith(`/v1/services/${record.service_id}/credentials`), 'the service id as sent');
  assert.equal(record.outcome, outcomeOf(expected.status));
  if (expected.status === 200) assert.deepEqual(record.fields.sort(), Object.keys(response.json()).sort());
  else assert.deepEqual(record.fields, []);
  assert.ok(!JSON.stringify(record).includes(gw.simulator.state.services[0]!.password), 'no secret in the record');
}

t.test('Redis outage', async (t) => {
  let redis: RedisServer;
  let simulator: WhmcsSimulator;
  let gw: TestGateway;
  let limitedKey: string;
  let limitedKeyId: string;
  let snapshot: { accounts: AccountRecord[]; keys: ApiKeyRecord[] };

  t.before(async () => {
    redis = await startRedisServer();
    simulator = await startWhmcsSimulator();
    gw = await buildTestGateway({ simulator, stores: await createRedisStores({ url: redis.url }), config: { keys: { pepper: TEST_PEPPER, cacheTtlMs: CACHE_TTL_MS } } });
    const limited = await gw.keyService.issue({ accountId: 'acme', name: 'limited', scopes: ['read:credentials'], rateLimits: { perMinute: 1, burst: 0 } });
    limitedKey = limited.key;
    limitedKeyId = limited.record.id;
  });
  t.teardown(async () => {
    await gw?.close();
    await simulator?.close();
    await redis?.stop();
  });

  const key = (label: string) => gw.keys[label] as string;
  const id = (label: string) => gw.keyIds[label] as string;
  /** A well-formed key with a real key id and a wrong secret. */
  const wrongSecret = () => `rk_${id('acme:all')}_${'A'.repeat(43)}`;

  const request = (method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: unknown) =>
    send(gw, method, url, headers, body);
  const credentials = (url: string, headers: Record<string, string>, expected: Expected) => audited(gw, url, headers, expected);

  /** Every outcome that does not need the upstream to fail. */
  async function everyOutcome(): Promise<void> {
    const all = { keyId: id('acme:all'), accountId: 'acme' };
    await credentials('/v1/services/1/credentials', bearer(key('acme:all')), { status: 200, reason: null, ...all });
    await credentials('/v1/services/1/credentials', bearer(wrongSecret()), { status: 401, reason: 'unauthenticated', keyId: id('acme:all'), accountId: null });
    await credentials('/v1/services/1/credentials', bearer('not-a-key'), { status: 401, reason: 'unauthenticated', keyId: null, accountId: null });
    await credentials('/v1/services/1/credentials', {}, { status: 401, reason: 'unauthenticated', keyId: null, accountId: null });
    await credentials('/v1/services/1/credentials', bearer(key('acme:read:services')), {
      status: 403,
      reason: 'insufficient_scope',
      keyId: id('acme:read:services'),
      accountId: 'acme',
    });
    await credentials('/v1/services/abc/credentials', bearer(key('acme:all')), { status: 400, reason: 'invalid_request', ...all });
    await credentials('/v1/services/1/credentials?api_key=x', bearer(key('acme:all')), { status: 400, reason: 'invalid_request', keyId: id('acme:all'), accountId: null });
    await credentials('/v1/services/999/credentials', bearer(key('acme:all')), { status: 404, reason: 'not_found', ...all });
    const limited = { keyId: limitedKeyId, accountId: 'acme' };
    await credentials('/v1/services/1/credentials', bearer(limitedKey), { status: 200, reason: null, ...limited });
    await credentials('/v1/services/1/credentials', bearer(limitedKey), { status: 429, reason: 'rate_limited', ...limited });
  }

  t.test('normal operation: one audit record per credentials call, whatever its outcome', async () => {
    await everyOutcome();
  });

  t.test('an answer whose record cannot be written is refused, and a refusal still answers', async () => {
    gw.audit.failing = true;
    try {
      const refused = await request('GET', '/v1/services/1/credentials', bearer(key('acme:all')));
      assert.equal(refused.statusCode, 503);
      assert.equal(refused.json().reason, 'store_unavailable');
      assert.ok(!refused.body.includes(simulator.state.services[0]!.password));
      const denied = await request('GET', '/v1/services/1/credentials', bearer(key('acme:read:services')));
      assert.equal(denied.statusCode, 403, 'the problem is sent; it holds no secret');
      assert.ok(gw.logs.some((line) => line.includes('audit record could not be written')), 'the operator is told');
    } finally {
      gw.audit.failing = false;
    }
  });

  t.test('Redis stopped: seen keys read on, never-seen keys and writes answer 503, nothing hangs, every call audited', async () => {
    // Seen before the outage: the read keys; a revoked one, whose invalidation arrives first.
    assert.equal((await request('GET', '/v1/products', bearer(key('acme:all')))).statusCode, 200);
    const doomed = await gw.keyService.issue({ accountId: 'acme', name: 'doomed', scopes: ['read:products'] });
    assert.equal((await request('GET', '/v1/products', bearer(doomed.key))).statusCode, 200);
    const invalidated = new Promise<void>((resolve) => gw.stores.keys.onInvalidation((keyId) => keyId === doomed.record.id && resolve()));
    await gw.keyService.revoke(doomed.record.id);
    await within('the invalidation', invalidated);
    snapshot = { accounts: await gw.stores.keys.listAccounts(), keys: await gw.stores.keys.listKeys() };

    await redis.stop();
    await sleep(CACHE_TTL_MS * 2);
    const calls = simulator.calls.length;

    for (const url of ['/v1/products', '/v1/services', '/v1/services/1', '/v1/me']) {
      const read = await request('GET', url, bearer(key('acme:all')));
      assert.equal(read.statusCode, 200, `${url} with a seen key: ${read.body}`);
      assert.ok(read.headers['x-ratelimit-remaining'] !== undefined, 'limited per instance');
    }
    const revoked = await request('GET', '/v1/products', bearer(doomed.key));
    assert.notEqual(revoked.statusCode, 200, 'a revoked key is not served from the stale copy');
    const neverSeen = await request('GET', '/v1/products', bearer(key('acme:read:products')));
    assert.equal(neverSeen.statusCode, 503, 'a key never seen cannot be checked');
    assert.equal(neverSeen.json().reason, 'store_unavailable');
    assert.ok(Number(neverSeen.headers['retry-after']) >= 1);

    const readsUpstream = simulator.calls.length;
    const order = await request('POST', '/v1/orders', { ...bearer(key('acme:all')), 'idempotency-key': 'outage-order' }, { product_id: '1', billing_cycle: 'monthly' });
    const action = await request('POST', '/v1/services/1/actions', { ...bearer(key('acme:all')), 'idempotency-key': 'outage-action' }, { action: 'reboot' });
    for (const write of [order, action]) {
      assert.equal(write.statusCode, 503, write.body);
      assert.equal(write.json().reason, 'store_unavailable');
      assert.ok(Number(write.headers['retry-after']) >= 1);
    }
    assert.equal(simulator.calls.length, readsUpstream, 'no write reached the upstream');
    assert.ok(simulator.calls.length > calls, 'the reads did');

    const health = await request('GET', '/v1/health', {});
    assert.equal(health.statusCode, 503);
    assert.equal(health.json().reason, 'store_unavailable');

    await everyOutcome();
    await credentials('/v1/services/1/credentials', bearer(key('acme:read:credentials')), {
      status: 503,
      reason: 'store_unavailable',
      keyId: id('acme:read:credentials'),
      accountId: null,
    });
  });

  t.test('Redis back: health says so at once, writes and never-seen keys work again', async () => {
    assert.equal((await request('GET', '/v1/health', {})).statusCode, 503, 'probed right before the recovery');
    await redis.restart();
    const reconnected = Date.now() + HANG_MS;
    while (!(await gw.stores.ping())) {
      assert.ok(Date.now() < reconnected, 'the stores reconnect');
      await sleep(50);
    }
    // The restarted server is empty: the operator's keys are put back.
    for (const account of snapshot.accounts) await gw.stores.keys.putAccount(account);
    for (const record of snapshot.keys) await gw.stores.keys.putKey(record);
    // Its cached answer must not hide the recovery for long.
    let health = await request('GET', '/v1/health', {});
    const deadline = Date.now() + 3_000;
    while (health.statusCode !== 200 && Date.now() < deadline) {
      await sleep(50);
      health = await request('GET', '/v1/health', {});
    }
    assert.equal(health.statusCode, 200, 'health reflects the recovery');
    const order = await request('POST', '/v1/orders', { ...bearer(key('acme:all')), 'idempotency-key': 'after-outage' }, { product_id: '1', billing_cycle: 'monthly' });
    assert.equal(order.statusCode, 201, order.body);
    assert.equal((await request('GET', '/v1/products', bearer(key('acme:read:products')))).statusCode, 200);
  });

  t.test('Redis frozen (accepts connections, answers nothing): the same, and nothing hangs', async () => {
    assert.equal((await request('GET', '/v1/products', bearer(key('acme:all')))).statusCode, 200);
    redis.pause();
    try {
      await sleep(CACHE_TTL_MS * 2);
      assert.equal((await request('GET', '/v1/products', bearer(key('acme:all')))).statusCode, 200);
      const order = await request('POST', '/v1/orders', { ...bearer(key('acme:all')), 'idempotency-key': 'frozen-order' }, { product_id: '1', billing_cycle: 'monthly' });
      assert.equal(order.statusCode, 503, order.body);
      assert.equal((await request('GET', '/v1/health', {})).statusCode, 503);
      await credentials('/v1/services/1/credentials', bearer(key('acme:all')), { status: 200, reason: null, keyId: id('acme:all'), accountId: 'acme' });
    } finally {
      redis.resume();
    }
  });

  t.test('Redis refusing writes (maxmemory reached, noeviction): reads go on, writes answer 503 and send nothing', async () => {
    const admin = new Redis(redis.url);
    try {
      assert.equal((await request('GET', '/v1/products', bearer(key('acme:all')))).statusCode, 200);
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      await admin.config('SET', 'maxmemory', '1');
      const calls = simulator.calls.length;
      const read = await request('GET', '/v1/products', bearer(key('acme:all')));
      assert.equal(read.statusCode, 200, 'the limits fall back to this instance, as when Redis is down');
      const order = await request('POST', '/v1/orders', { ...bearer(key('acme:all')), 'idempotency-key': 'oom-order' }, { product_id: '1', billing_cycle: 'monthly' });
      assert.equal(order.statusCode, 503, order.body);
      assert.equal(order.json().reason, 'store_unavailable');
      assert.ok(Number(order.headers['retry-after']) >= 1);
      assert.ok(!simulator.calls.slice(calls).some((call) => call.action === 'AddOrder'), 'no write reached the upstream');
    } finally {
      await admin.config('SET', 'maxmemory', '0');
      admin.disconnect();
    }
  });
});

t.test('credentials audit when the upstream fails', async (t) => {
  t.test('502, 504 and 503 are audited once each', async () => {
    const simulator = await startWhmcsSimulator();
    const gw = await buildTestGateway({ simulator, whmcs: { timeoutMs: 300 } });
    const all = { keyId: gw.keyIds['acme:all'] as string, accountId: 'acme' };
    const headers = bearer(gw.keys['acme:all']);
    try {
      simulator.inject({ kind: 'http500', action: 'GetClientsProducts' });
      await audited(gw, '/v1/services/1/credentials', headers, { status: 502, reason: 'upstream_error', ...all });
      simulator.clearFaults();
      simulator.inject({ kind: 'hang', action: 'GetClientsProducts' });
      await audited(gw, '/v1/services/1/credentials', headers, { status: 504, reason: 'upstream_timeout', ...all });
      await simulator.close();
      await audited(gw, '/v1/services/1/credentials', headers, { status: 503, reason: 'upstream_unavailable', ...all });
    } finally {
      await simulator.close();
      await gw.close();
    }
  });
});

t.test('health probe', async (t) => {
  t.test('answers within bounds while the upstream hangs, whatever the upstream timeout', async () => {
    const simulator = await startWhmcsSimulator();
    const gw = await buildTestGateway({ simulator, whmcs: { timeoutMs: 30_000 } });
    try {
      simulator.inject({ kind: 'hang', action: 'GetCurrencies' });
      const health = await within('GET /v1/health', gw.app.inject({ method: 'GET', url: '/v1/health' }), 3_000);
      assert.equal(health.statusCode, 503);
      assert.equal(health.json().reason, 'upstream_unavailable');
    } finally {
      await simulator.close();
      await gw.close();
    }
  });
});
