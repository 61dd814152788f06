/**
 * 409 idempotency_in_progress's wait is as long as the first request has run (README, contract):
 * exactly that on the memory store's clock, and within a scheduling margin on Redis's own.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { MemoryIdempotencyStore } from '../../src/stores/memory/idempotency-store.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import type { IdempotencyStore } from '../../src/stores/types.js';
import { startRedisServer } from '../helpers/redis.js';

const request = (key: string) => ({
  accountId: 'acme', key, fingerprint: 'f', endpoint: 'POST /v1/orders', leaseMs: 20_000, settleMs: 300, retentionMs: 60_000, staleAfterMs: null,
});

async function retryAfterFor(store: IdempotencyStore, key: string, wait: () => Promise<void>): Promise<number | null | undefined> {
  assert.equal((await store.begin(request(key))).kind, 'acquired');
  await wait();
  const repeat = await store.begin(request(key));
  assert.equal(repeat.kind, 'in_progress');
  return repeat.kind === 'in_progress' ? repeat.retryAfterMs : undefined;
}

t.test('memory: after 4 s of a 20 s lease, ask again in 4 s', async () => {
  let now = 1_000_000;
  const store = new MemoryIdempotencyStore({ now: () => now });
  assert.equal(await retryAfterFor(store, 'k1', async () => void (now += 4_000)), 4_000);
});

t.test('redis: after 2.5 s of a 20 s lease, ask again in about 2.5 s', async (t) => {
  const server = await startRedisServer();
  t.teardown(() => server.stop());
  const stores = await createRedisStores({ url: server.url });
  t.teardown(() => stores.close());
  const retryAfter = await retryAfterFor(stores.idempotency, 'k2', () => new Promise((resolve) => setTimeout(resolve, 2_500)));
  assert.ok(typeof retryAfter === 'number' && retryAfter >= 2_400 && retryAfter <= 3_200, `retryAfterMs ${retryAfter}`);
});
