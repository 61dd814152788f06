/**
 * REDIS_URL's database number (`redis://host:6379/5`). ioredis SELECTs it on connect and, when the
 * server refuses (a number past the server's `databases`, or a server that has only database 0: a
 * cluster node, many managed services), only emits an error and goes on in database 0: the gateway
 * then served from another database than the one configured, without a word.
 */
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import t from 'tap';
import { ConfigError } from '../../src/config.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { startRedisServer } from '../helpers/redis.js';

t.test('a database the server does not have stops the start, naming redisUrl; one it has is used', async (t) => {
  const redis = await startRedisServer({ args: ['--databases', '2'] });
  t.teardown(() => redis.stop());

  await assert.rejects(
    // Closed if it does open (the old behaviour), so that a failure does not leave the test hanging.
    createRedisStores({ url: `${redis.url}/5` }).then(async (stores) => {
      await stores.close();
      return stores;
    }),
    (error: unknown) => error instanceof ConfigError && /redisUrl: database 5: .*DB index is out of range/.test(error.message),
  );
  const probe = new Redis(redis.url);
  t.teardown(() => probe.disconnect());
  assert.equal(await probe.dbsize(), 0, 'nothing was written to database 0');

  const stores = await createRedisStores({ url: `${redis.url}/1` });
  await stores.keys.putAccount({ id: 'acme', name: 'Acme', upstreamId: '1', createdAt: new Date().toISOString() });
  await stores.close();
  assert.equal(await probe.dbsize(), 0);
  await probe.select(1);
  assert.ok((await probe.dbsize()) > 0, 'database 1 holds the account');
});
