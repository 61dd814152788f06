/**
 * A request refused by a key's day limit consumes nothing from the account's limit (contract §4:
 * a refused request counts against no other policy), in the Redis script as in memory. A key that
 * has used up its day and keeps being called (a client in a retry loop) must not lock every other
 * key of the same account out through the account limit.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { keyGroup } from '../../src/stores/rate-policies.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import type { KeyLimitRequest, RateLimitStore, Stores } from '../../src/stores/types.js';
import { startRedisServer } from '../helpers/redis.js';
import { unique } from '../stores/conformance.js';

const GENEROUS_MINUTE = { ratePerMinute: 1_000, burst: 1_000, periodMs: 60_000 };

async function refusedByDayConsumesNoAccountBudget(store: RateLimitStore): Promise<void> {
  const accountId = unique('acct');
  const accountPerMinute = { limit: 3, windowMs: 60_000 };
  const tired: KeyLimitRequest = { accountId, keyId: unique('key'), perMinute: GENEROUS_MINUTE, perDay: 1, accountPerMinute };
  const other: KeyLimitRequest = { ...tired, keyId: unique('key'), perDay: 1_000 };

  assert.equal((await store.hit([keyGroup(tired)])).allowed, true);
  for (let i = 0; i < 3; i += 1) {
    const refused = await store.hit([keyGroup(tired)]);
    assert.deepEqual(refused.violated, ['key_day']);
  }
  const next = await store.hit([keyGroup(other)]);
  assert.equal(next.allowed, true, 'the account has used 1 of its 3: the other key is allowed');
  assert.equal(next.policies.find((p) => p.name === 'account_minute')?.remaining, 1);
}

t.test('memory store', async () => {
  const stores = createMemoryStores();
  await refusedByDayConsumesNoAccountBudget(stores.rateLimits);
});

t.test('redis store', async (t) => {
  const server = await startRedisServer();
  let stores: Stores | undefined;
  t.teardown(async () => {
    await stores?.close();
    await server.stop();
  });
  stores = await createRedisStores({ url: server.url, keyPrefix: `${unique('review')}:` });
  await refusedByDayConsumesNoAccountBudget(stores.rateLimits);
});
