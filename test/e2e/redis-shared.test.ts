/**
 * The production shape: two gateway instances on one Redis (the harness's own server). One limit,
 * one idempotency record and one key set between them; a Redis outage mid-run degrades as the
 * contract says and never hangs.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { startWhmcsSimulator, type WhmcsSimulator } from '../../simulators/whmcs/server.js';
import { Redis } from 'ioredis';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { bearer, buildTestGateway, TEST_PEPPER, type TestGateway } from '../helpers/gateway.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';

t.test('two gateways sharing one Redis', async (t) => {
  let redis: RedisServer;
  let simulator: WhmcsSimulator;
  let one: TestGateway;
  let two: TestGateway;
  let key: string;

  t.before(async () => {
    redis = await startRedisServer();
    simulator = await startWhmcsSimulator();
    const config = { rateLimits: { accountPerMinute: 6 } };
    one = await buildTestGateway({ simulator, stores: await createRedisStores({ url: redis.url }), config });
    two = await buildTestGateway({ simulator, stores: await createRedisStores({ url: redis.url }), config, issueKeys: false });
    key = one.keys['acme:all'] as string;
  });
  t.teardown(async () => {
    await Promise.all([one?.close(), two?.close()]);
    await simulator?.close();
    await redis?.stop();
  });

  const get = (gw: TestGateway, url: string, apiKey = key) => gw.app.inject({ method: 'GET', url, headers: bearer(apiKey) });

  t.test('a key issued through one instance works on the other at once', async () => {
    const { key: fresh } = await one.keyService.issue({ accountId: 'beta', name: 'late', scopes: ['read:webhooks'] });
    assert.equal((await get(two, '/v1/webhooks', fresh)).statusCode, 200);
  });

  t.test('the account limit is one budget across instances', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await get(one, '/v1/webhooks')).statusCode);
      statuses.push((await get(two, '/v1/webhooks')).statusCode);
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 429, 429]);
  });

  t.test('an idempotency record written by one instance is replayed by the other', async () => {
    const headers = { ...bearer(one.keys['beta:all']), 'content-type': 'application/json', 'idempotency-key': 'shared-1' };
    const payload = JSON.stringify({ product_id: '2', billing_cycle: 'monthly' });
    const first = await one.app.inject({ method: 'POST', url: '/v1/orders', headers, payload });
    assert.equal(first.statusCode, 201, first.body);
    const replay = await two.app.inject({ method: 'POST', url: '/v1/orders', headers, payload });
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, first.body);
  });

  t.test('a revocation reaches the other instance\'s cache without waiting for its TTL', async () => {
    const { key: doomed, record } = await one.keyService.issue({ accountId: 'beta', name: 'doomed', scopes: ['read:webhooks'] });
    assert.equal((await get(two, '/v1/webhooks', doomed)).statusCode, 200, 'now cached on instance two');
    await one.keyService.revoke(record.id);
    let status = 200;
    for (let i = 0; i < 20 && status === 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      status = (await get(two, '/v1/webhooks', doomed)).statusCode;
    }
    assert.equal(status, 401);
  });

  t.test('through the whole gateway: an authenticated GET is one Redis round trip, an idempotent POST four scripts and its webhook event', async (t) => {
    // An instance of its own, with the default limits (the suite's account limit is spent by now).
    // A long key-cache TTL: no read-ahead of the key falls inside the measured requests on a slow machine.
    const three = await buildTestGateway({ simulator, stores: await createRedisStores({ url: redis.url }), issueKeys: false, config: { keys: { pepper: TEST_PEPPER, cacheTtlMs: 60_000 } } });
    t.teardown(() => three.close());
    // An account of its own too: the other tests count on what is left of beta's limit.
    await three.keyService.createAccount({ id: 'trips', name: 'Trips', upstreamId: '3' });
    const { key: tripsKey } = await three.keyService.issue({ accountId: 'trips', name: 'trips', scopes: ['read:products', 'write:orders'] });
    const headers = { ...bearer(tripsKey), 'content-type': 'application/json' };
    const order = (idempotencyKey: string) =>
      three.app.inject({ method: 'POST', url: '/v1/orders', headers: { ...headers, 'idempotency-key': idempotencyKey }, payload: { product_id: '2', billing_cycle: 'monthly' } });
    // Warm: the key read and cached, the scripts loaded.
    assert.equal((await get(three, '/v1/products', tripsKey)).statusCode, 200);
    assert.equal((await order('trips-warm')).statusCode, 201);
    const admin = new Redis(redis.url);
    const monitor = await admin.monitor();
    try {
      const received: string[] = [];
      // What clients send; the commands a script runs come from source 'lua'.
      monitor.on('monitor', (_time: string, args: string[], source: string) => {
        if (source !== 'lua') received.push(String(args[0]).toLowerCase());
      });
      const sentinel = async (name: string) => {
        await admin.echo(name);
        const deadline = Date.now() + 2_000;
        while (!received.includes('echo') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
        const seen = received.splice(0, received.length);
        assert.equal(seen.pop(), 'echo', `${name}: the sentinel arrived`);
        return seen;
      };
      await sentinel('start');
      assert.equal((await get(three, '/v1/products', tripsKey)).statusCode, 200);
      assert.deepEqual(await sentinel('get'), ['evalsha'], 'the rate-limit decision, nothing else');
      assert.equal((await order('trips-1')).statusCode, 201);
      // The rate-limit decision, then the idempotency claim, the write-ahead mark and the outcome; besides
      // them only the order's webhook event (its snapshot entry read, state and tag in one HMGET, the
      // account's endpoint read, and the snapshot recorded after the event, by a script that checks it
      // still holds what was read).
      const post = await sentinel('post');
      assert.deepEqual(post.filter((command) => command === 'evalsha'), ['evalsha', 'evalsha', 'evalsha', 'evalsha', 'evalsha'], post.join(' '));
      assert.deepEqual(new Set(post.filter((command) => command !== 'evalsha')), new Set(['hmget', 'hgetall']), post.join(' '));
    } finally {
      monitor.disconnect();
      admin.disconnect();
    }
  });

  t.test('Redis down: POSTs answer 503 store_unavailable and run nothing; reads fall back; nothing hangs', async () => {
    const beta = one.keys['beta:all'] as string;
    assert.equal((await get(one, '/v1/products', beta)).statusCode, 200, 'key cached before the outage');
    // This Redis keeps nothing on disk; a production one keeps its keys, which putting them back after the
    // restart stands for (the instances read every key again once their invalidation subscription is back).
    const saved = await createRedisStores({ url: redis.url });
    const [accounts, keys] = await Promise.all([saved.keys.listAccounts(), saved.keys.listKeys()]).finally(() => saved.close());
    await redis.stop();
    try {
      const orders = simulator.state.orders.length;
      const started = Date.now();
      const post = await one.app.inject({
        method: 'POST',
        url: '/v1/orders',
        headers: { ...bearer(beta), 'content-type': 'application/json', 'idempotency-key': 'outage-1' },
        payload: JSON.stringify({ product_id: '1', billing_cycle: 'monthly' }),
      });
      assert.equal(post.statusCode, 503, post.body);
      assert.equal(post.json().reason, 'store_unavailable');
      assert.ok(Number(post.headers['retry-after']) >= 1);
      assert.equal(simulator.state.orders.length, orders, 'not executed unguarded');
      const read = await get(one, '/v1/products', beta);
      assert.equal(read.statusCode, 200, 'rate limiting fell back to the instance');
      assert.ok(read.headers['x-ratelimit-remaining'] !== undefined);
      const health = await one.app.inject({ method: 'GET', url: '/v1/health' });
      assert.ok([200, 503].includes(health.statusCode));
      assert.ok(Date.now() - started < 5_000, 'no request hung');
    } finally {
      await redis.restart();
    }
    const restored = await createRedisStores({ url: redis.url });
    await Promise.all([...accounts.map((account) => restored.keys.putAccount(account)), ...keys.map((record) => restored.keys.putKey(record))]).finally(() => restored.close());
    let status = 0;
    for (let i = 0; i < 40 && status !== 201; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (
        await one.app.inject({
          method: 'POST',
          url: '/v1/orders',
          headers: { ...bearer(beta), 'content-type': 'application/json', 'idempotency-key': `after-outage-${i}` },
          payload: JSON.stringify({ product_id: '1', billing_cycle: 'monthly' }),
        })
      ).statusCode;
    }
    assert.equal(status, 201, 'back to normal once Redis is back');
  });
});

t.test('rate limits configured to fail closed', async (t) => {
  t.test('answer 503 while Redis is down, never 429 or 500', async () => {
    const redis = await startRedisServer();
    const gw = await buildTestGateway({ stores: await createRedisStores({ url: redis.url }), config: { rateLimits: { onStoreError: 'closed' } } });
    try {
      assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/webhooks', headers: bearer(gw.keys['acme:all']) })).statusCode, 200);
      await redis.stop();
      const response = await gw.app.inject({ method: 'GET', url: '/v1/health' });
      assert.equal(response.statusCode, 503);
      assert.equal(response.json().reason, 'store_unavailable');
    } finally {
      await gw.close();
      await redis.stop();
    }
  });
});
