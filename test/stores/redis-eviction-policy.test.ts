/**
 * A Redis that evicts keys at maxmemory (any maxmemory-policy but noeviction; every idempotency
 * record has a TTL, so the volatile-* policies take them too) silently forgets idempotency records
 * (a retried order runs again), outbox entries and API keys. The stores say so when they connect.
 */
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import t from 'tap';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';

let server: RedisServer;
let admin: Redis;
t.before(async () => {
  server = await startRedisServer();
  admin = new Redis(server.url);
});
t.teardown(async () => {
  admin.disconnect();
  await server.stop();
});

async function warningsAt(policy: string): Promise<string[]> {
  await admin.config('SET', 'maxmemory-policy', policy);
  const warnings: string[] = [];
  // The harness's Redis persists nothing, which is said too: only the policy is this test's.
  const stores = await createRedisStores({ url: server.url, onWarning: (warning) => /maxmemory-policy/.test(warning) && warnings.push(warning) });
  await stores.close();
  return warnings;
}

t.test('an evicting maxmemory-policy is reported at start', async () => {
  for (const policy of ['allkeys-lru', 'volatile-ttl']) {
    const warnings = await warningsAt(policy);
    assert.equal(warnings.length, 1, policy);
    assert.match(warnings[0] ?? '', new RegExp(`maxmemory-policy is ${policy}.*noeviction`));
  }
});

t.test('noeviction is not', async () => {
  assert.deepEqual(await warningsAt('noeviction'), []);
});
