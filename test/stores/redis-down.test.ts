/**
 * When Redis goes away nothing may hang: every store method rejects with StoreUnavailableError
 * within about a second, and everything works again once Redis is back (scripts reloaded,
 * invalidations resubscribed).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { StoreUnavailableError } from '../../src/stores/types.js';
import type { Stores } from '../../src/stores/types.js';
import { startRedisServer } from '../helpers/redis.js';
import type { RedisServer } from '../helpers/redis.js';
import {
  webhookRecord,
  hitIp,
  hitKey,
  hitIpAndKey,
} from './conformance.js';

const FAST_ENOUGH_MS = 1_000;
const SCOPE = { accountId: 'acct_1', key: 'order-1' };
const RESPONSE = { status: 201, headers: {}, body: '{}' };
const ACCOUNT = { id: 'acct_1', name: 'A', upstreamId: '1', createdAt: '2026-03-01T00:00:00.000Z' };
const KEY = {
  id: '00000000000000aa',
  accountId: 'acct_1',
  name: 'k',
  scopes: [],
  secretHash: 'h',
  createdAt: '2026-03-01T00:00:00.000Z',
  expiresAt: null,
  revokedAt: null,
  rateLimits: null,
};

/** One call of every store method. */
function everyMethod(stores: Stores) {
  return {
    hitIp: () => hitIp(stores.rateLimits, '192.0.2.1', { limit: 100, windowMs: 60_000 }),
    hitKey: () =>
      hitKey(stores.rateLimits, {
        accountId: 'acct_1',
        keyId: KEY.id,
        perMinute: { ratePerMinute: 60, burst: 20 },
        perDay: 5_000,
        accountPerMinute: { limit: 120, windowMs: 60_000 },
      }),
    hitIpAndKey: () =>
      hitIpAndKey(stores.rateLimits, '192.0.2.1', { limit: 100, windowMs: 60_000 }, {
        accountId: 'acct_1',
        keyId: KEY.id,
        perMinute: { ratePerMinute: 60, burst: 20 },
        perDay: 5_000,
        accountPerMinute: null,
      }),
    begin: () =>
      stores.idempotency.begin({
        ...SCOPE,
        fingerprint: 'f',
        endpoint: 'POST /v1/orders',
        leaseMs: 5_000,
        settleMs: 5_000,
        retentionMs: 60_000,
        staleAfterMs: 3_600_000,
      }),
    complete: () => stores.idempotency.complete(SCOPE, 'token', RESPONSE),
    release: () => stores.idempotency.release(SCOPE, 'token'),
    markUnknown: () => stores.idempotency.markUnknown(SCOPE, 'token'),
    markSent: () => stores.idempotency.markSent(SCOPE, 'token', 5_000),
    putAccount: () => stores.keys.putAccount(ACCOUNT),
    getAccount: () => stores.keys.getAccount(ACCOUNT.id),
    listAccounts: () => stores.keys.listAccounts(),
    putKey: () => stores.keys.putKey(KEY),
    getKey: () => stores.keys.getKey(KEY.id),
    getKeyWithAccount: () => stores.keys.getKeyWithAccount(KEY.id),
    listKeys: () => stores.keys.listKeys(ACCOUNT.id),
    publishInvalidation: () => stores.keys.publishInvalidation(KEY.id),
    getWebhook: () => stores.webhooks.get(ACCOUNT.id),
    setWebhook: () => stores.webhooks.set(ACCOUNT.id, webhookRecord('https://example.com/h', 's', '2026-03-01T00:00:00Z'), null),
    clearWebhook: () => stores.webhooks.clear(ACCOUNT.id),
  };
}

async function assertAllUnavailable(stores: Stores): Promise<void> {
  await Promise.all(
    Object.entries(everyMethod(stores)).map(async ([name, call]) => {
      const started = performance.now();
      await assert.rejects(call(), StoreUnavailableError, name);
      const elapsed = performance.now() - started;
      assert.ok(elapsed < FAST_ENOUGH_MS, `${name} took ${Math.round(elapsed)} ms`);
    }),
  );
  const started = performance.now();
  assert.equal(await stores.ping(), false);
  assert.ok(performance.now() - started < FAST_ENOUGH_MS, 'ping answered quickly');
}

async function waitUntilHealthy(stores: Stores): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await stores.ping())) {
    assert.ok(Date.now() < deadline, 'the stores recover within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

t.test('redis down', async (t) => {
  let server: RedisServer;
  let stores: Stores;

  t.before(async () => {
    server = await startRedisServer();
    stores = await createRedisStores({ url: server.url });
  });

  t.teardown(async () => {
    await stores.close();
    await server.stop();
  });

  t.test('works while Redis is up', async () => {
    for (const [name, call] of Object.entries(everyMethod(stores))) await assert.doesNotReject(call(), name);
  });

  t.test('rejects every method quickly with StoreUnavailableError when Redis is stopped', async () => {
    await server.stop();
    await assertAllUnavailable(stores);
  });

  t.test('works again once Redis is back: scripts reloaded, invalidations resubscribed', async () => {
    await server.restart();
    await waitUntilHealthy(stores);
    assert.equal((await hitIp(stores.rateLimits, '192.0.2.1', { limit: 100, windowMs: 60_000 })).allowed, true);
    assert.equal((await everyMethod(stores).begin()).kind, 'acquired', 'the restarted server is empty');

    const seen: Array<string | null> = [];
    stores.keys.onInvalidation((keyId) => seen.push(keyId));
    const deadline = Date.now() + 3_000;
    // The subscription comes back on its own connection, possibly a moment after the main one.
    while (!seen.includes(KEY.id)) {
      assert.ok(Date.now() < deadline, 'invalidations arrive again');
      await stores.keys.publishInvalidation(KEY.id);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  t.test('rejects every method quickly when Redis accepts connections but does not answer', async () => {
    server.pause();
    try {
      await assertAllUnavailable(stores);
    } finally {
      server.resume();
    }
    await waitUntilHealthy(stores);
  });

  t.test('creating stores rejects with StoreUnavailableError when Redis is not there', async () => {
    await server.stop();
    const started = performance.now();
    await assert.rejects(createRedisStores({ url: server.url, connectTimeoutMs: 300 }), StoreUnavailableError);
    assert.ok(performance.now() - started < FAST_ENOUGH_MS);
  });
});
