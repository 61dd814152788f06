/**
 * On a Redis Cluster, the invalidation subscription that breaks (its node closes the connection)
 * is taken up again by ioredis on a node of its choosing, without 'close' or 'ready' on the Cluster
 * client: a revocation published in between is lost, and every copy read before must be confirmed
 * again, as on a standalone server (test/stores/redis.test.ts).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { Redis } from 'ioredis';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { startRedisCluster, type RedisClusterNodes } from '../helpers/redis.js';
import { realClock, revokedUnannounced, unique } from './conformance.js';

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
    const { service, key } = await revokedUnannounced(stores.keys);

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
