/**
 * A Redis that comes back without the configured database (restarted with fewer
 * `databases`, or replaced by a managed one with database 0 only) is said at the reconnection
 * (src/stores/redis/index.ts, checkAgain): ioredis carries on in database 0, where the gateway now
 * reads and writes beside whatever else uses it. Without the warning the operator heard nothing.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { startRedisServer, type RedisServerOptions } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

t.test('database 5 refused at a reconnection is warned of, naming redisUrl', async (t) => {
  const options: RedisServerOptions = { args: [] };
  const redis = await startRedisServer(options);
  t.teardown(() => redis.stop());
  const warnings: string[] = [];
  const stores = await createRedisStores({ url: `${redis.url}/5`, onWarning: (warning) => warnings.push(warning) });
  t.teardown(() => stores.close());
  assert.deepEqual(warnings.filter((each) => /database 5/.test(each)), [], 'the server has it at start');

  options.args = ['--databases', '2'];
  await redis.restart();
  const warning = await waitFor(() => warnings.find((each) => /database 5/.test(each)), 10_000, 'the warning');
  assert.match(warning, /redisUrl: database 5: Redis refused it/);
});
