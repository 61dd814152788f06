/**
 * A Redis that refuses the gateway's credentials (a wrong password in REDIS_URL, or none where
 * Redis asks for one) is reported with the reason Redis gave, by the gateway at boot and by the
 * key CLI, so that the operator looks at the password, not the network; the password itself is
 * never in the message.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { Redis } from 'ioredis';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { StoreUnavailableError } from '../../src/stores/types.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';

const PASSWORD = 'review-redis-password-4711';
let redis: RedisServer;

t.before(async () => {
  redis = await startRedisServer();
  const admin = new Redis(redis.url);
  await admin.config('SET', 'requirepass', PASSWORD);
  admin.disconnect();
});
t.teardown(() => redis.stop());

const withPassword = (password: string) => `redis://:${password}@127.0.0.1:${redis.port}`;

t.test('the stores say that Redis refused the credentials, and never echo the password', async () => {
  for (const url of [withPassword('wrong-password-0815'), `redis://127.0.0.1:${redis.port}`]) {
    await assert.rejects(createRedisStores({ url, connectTimeoutMs: 2_000 }), (error: Error) => {
      assert.ok(error instanceof StoreUnavailableError, String(error));
      assert.match(error.message, /WRONGPASS|NOAUTH|auth/i, `no reason given: ${error.message}`);
      assert.ok(!error.message.includes('wrong-password-0815'));
      return true;
    });
  }
  // The right password works (the server is up and reachable all along).
  const stores = await createRedisStores({ url: withPassword(PASSWORD), connectTimeoutMs: 2_000 });
  assert.equal(await stores.ping(), true);
  await stores.close();
});

t.test('the key CLI exits 69 naming the refusal (not only "not reachable")', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-review-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: withPassword('wrong-password-0815'), KEYS_FILE: join(dir, 'keys.json'), CONFIG_FILE: join(dir, 'none.json'), ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log') };
  delete env.CONFIG_FILE;
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'bin/reseller-keys.ts', 'list', '--json'], { env, encoding: 'utf8', timeout: 30_000 });
  assert.equal(result.status, 69, result.stderr);
  const error = JSON.parse(result.stderr) as { error: string };
  assert.match(error.error, /WRONGPASS|NOAUTH|auth/i);
  assert.ok(!result.stderr.includes('wrong-password-0815'));
});
