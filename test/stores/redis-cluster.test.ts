/**
 * The conformance suites on a real 3-master Redis Cluster: every script must touch one slot only
 * (a CROSSSLOT error fails the test), and accounts must spread over the masters.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { Redis } from 'ioredis';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { StoreUnavailableError } from '../../src/stores/types.js';
import { startRedisCluster } from '../helpers/redis.js';
import type { RedisClusterNodes } from '../helpers/redis.js';
import { unique, hitKey } from './conformance.js';
import { runRedisConformance } from './redis-conformance.js';

let cluster: RedisClusterNodes;

t.before(async () => {
  cluster = await startRedisCluster();
});

t.teardown(async () => {
  await cluster.stop();
});

runRedisConformance(t, 'redis cluster', (keyPrefix, webhookAdmission) => createRedisStores({ clusterNodes: cluster.nodes, keyPrefix, webhookAdmission }));

t.test('redis cluster: specifics', async (t) => {
  t.test('WAIT runs on the master that holds the claim: with no replicas there, replicaAcks refuses it as unavailable', async () => {
    const stores = await createRedisStores({
      clusterNodes: cluster.nodes,
      keyPrefix: `${unique('wait')}:`,
      replicaAcks: { replicas: 1, timeoutMs: 50 },
    });
    try {
      for (let index = 0; index < 6; index += 1) {
        const claim = stores.idempotency.begin({
          accountId: `acct_${index}`,
          key: 'k',
          fingerprint: 'f',
          endpoint: 'POST /v1/orders',
          leaseMs: 5_000,
          settleMs: 5_000,
          retentionMs: 60_000,
          staleAfterMs: null,
        });
        await assert.rejects(claim, (error: Error) => error instanceof StoreUnavailableError && /reached 0 of 1 replicas/.test(error.message));
      }
    } finally {
      await stores.close();
    }
  });

  t.test('spreads accounts over all masters', async () => {
    const stores = await createRedisStores({ clusterNodes: cluster.nodes, keyPrefix: `${unique('spread')}:` });
    try {
      for (let index = 0; index < 30; index += 1) {
        const decision = await hitKey(stores.rateLimits, {
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
