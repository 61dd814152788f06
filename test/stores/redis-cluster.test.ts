/**
 * The conformance suites on a real 3-master Redis Cluster: every script must touch one slot only
 * (a CROSSSLOT error fails the test), and accounts must spread over the masters.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { createRedisStores } from '../../src/stores/redis/index.js';
import type { Stores } from '../../src/stores/types.js';
import { startRedisCluster } from '../helpers/redis.js';
import type { RedisClusterNodes } from '../helpers/redis.js';
import {
  realClock,
  runIdempotencyConformance,
  runKeyStoreConformance,
  runRateLimitConformance,
  runWebhookConformance,
  unique,
} from './conformance.js';
import type { FixtureFactory } from './conformance.js';

let cluster: RedisClusterNodes;

before(async () => {
  cluster = await startRedisCluster();
});

after(async () => {
  await cluster.stop();
});

function clusterFixture<S>(pick: (stores: Stores) => S): FixtureFactory<S> {
  return async () => {
    const stores = await createRedisStores({ clusterNodes: cluster.nodes, keyPrefix: `${unique('test')}:` });
    return { store: pick(stores), clock: realClock, close: () => stores.close() };
  };
}

runRateLimitConformance('redis cluster', clusterFixture((stores) => stores.rateLimits));
runIdempotencyConformance('redis cluster', clusterFixture((stores) => stores.idempotency));
runKeyStoreConformance('redis cluster', clusterFixture((stores) => stores.keys));
runWebhookConformance('redis cluster', clusterFixture((stores) => stores.webhooks));

describe('redis cluster: specifics', () => {
  it('spreads accounts over all masters', async () => {
    const stores = await createRedisStores({ clusterNodes: cluster.nodes, keyPrefix: `${unique('spread')}:` });
    try {
      for (let index = 0; index < 30; index += 1) {
        const decision = await stores.rateLimits.hitKey({
          accountId: `acct_${index}`,
          keyId: `key_${index}`,
          perMinute: { ratePerMinute: 60, burst: 20 },
          perDay: 5_000,
          accountPerMinute: { limit: 120, windowMs: 60_000 },
        });
        assert.equal(decision.allowed, true);
      }
      for (const node of cluster.nodes) {
        const direct = new Redis(node);
        try {
          assert.ok((await direct.dbsize()) > 0, `master ${node.port} holds some accounts`);
        } finally {
          direct.disconnect();
        }
      }
    } finally {
      await stores.close();
    }
  });
});
