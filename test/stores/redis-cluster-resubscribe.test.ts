/**
 * On a Redis Cluster, the invalidation subscription that breaks (its node closes the connection)
 * is taken up again by ioredis on a node of its choosing, without 'close' or 'ready' on the Cluster
 * client: a revocation published in between is lost, and every copy read before must be confirmed
 * again, as on a standalone server (test/stores/redis.test.ts).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { Redis } from 'ioredis';
import { KeyService } from '../../src/keys/key-service.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { startRedisCluster, type RedisClusterNodes } from '../helpers/redis.js';
import { realClock, unique } from './conformance.js';

let cluster: RedisClusterNodes;
t.before(async () => {
  cluster = await startRedisCluster();
});
t.teardown(() => cluster.stop());

t.test('cluster: a copy read before the subscription broke is read again once it is back', async () => {
  const keyPrefix = `${unique('cluster-resubscribe')}:`;
  const stores = await createRedisStores({ clusterNodes: cluster.nodes, keyPrefix });
  const admins = cluster.nodes.map((node) => new Redis(node.port, node.host));
  try {
    const service = new KeyService(stores.keys, 'resubscribe-pepper-0123456789abcdef0123456789', { cacheTtlMs: 600_000 });
    await service.createAccount({ id: 'acct_r', name: 'R', upstreamId: '1' });
    const { record, key } = await service.issue({ accountId: 'acct_r', name: 'k', scopes: ['read:products'] });
    assert.equal(typeof (await service.authenticate(key)), 'object');
    // A revocation whose message nobody receives: written straight to the store.
    await stores.keys.putKey({ ...record, revokedAt: new Date(Date.now() - 1_000).toISOString() });
    assert.equal(typeof (await service.authenticate(key)), 'object', 'the cached copy serves while it is fresh');

    const channel = `${keyPrefix}key-invalidation`;
    const subscribers = async () => {
      let count = 0;
      for (const admin of admins) count += Number(((await admin.call('PUBSUB', 'NUMSUB', channel)) as [string, number])[1]);
      return count;
    };
    assert.equal(await subscribers(), 1);
    for (const admin of admins) await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    const deadline = Date.now() + 5_000;
    do {
      assert.ok(Date.now() < deadline, 'the subscription came back');
      await realClock.advance(20);
    } while ((await subscribers()) < 1);
    assert.equal(await service.authenticate(key), 'revoked', 'read again from the store');
  } finally {
    for (const admin of admins) admin.disconnect();
    await stores.close();
  }
});
