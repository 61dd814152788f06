/**
 * A rolling deploy where one instance got another KEY_PEPPER (a typo, a secret from the wrong
 * environment) on the Redis the others share. Every key hashed with the right pepper would answer
 * 401 "invalid key" on that instance only (a client behind a round-robin balancer sees its key fail
 * one time in N), and a key issued through its admin API would fail on every other instance. It must
 * fail clearly instead: the instance refuses to start (a config error naming keys.pepper).
 * Likewise another WEBHOOK_ENCRYPTION_KEY: every event that instance claimed failed for good, its
 * endpoint's secret unopenable there, though the others could have sent it.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { startWhmcsSimulator, type WhmcsSimulator } from '../../simulators/whmcs/server.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BACKENDS } from '../../mappings/index.js';
import { keysCli } from '../../src/cli/keys.js';
import { ConfigError } from '../../src/config.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { bearer, buildTestGateway, TEST_PEPPER, type TestGateway } from '../helpers/gateway.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';

t.test('instances sharing one Redis with different key peppers', async (t) => {
  let redis: RedisServer;
  let simulator: WhmcsSimulator;
  const built: TestGateway[] = [];
  t.before(async () => {
    redis = await startRedisServer();
    simulator = await startWhmcsSimulator();
  });
  t.teardown(async () => {
    await Promise.all(built.map((gw) => gw.close()));
    await simulator?.close();
    await redis?.stop();
  });

  t.test('the instance with another pepper refuses to start, naming keys.pepper; the same pepper starts', async () => {
    const one = await buildTestGateway({ simulator, stores: await createRedisStores({ url: redis.url }) });
    built.push(one);
    const key = one.keys['acme:all'] as string;
    assert.equal((await one.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) })).statusCode, 200);

    const stores = await createRedisStores({ url: redis.url });
    let two: TestGateway | undefined;
    try {
      two = await buildTestGateway({ simulator, stores, issueKeys: false, config: { keys: { pepper: 'another-pepper-0123456789abcdef0123456789' } } });
      built.push(two);
    } catch (error) {
      await stores.close();
      assert.ok(error instanceof ConfigError, String(error));
      assert.match(error.message, /keys\.pepper/);
    }
    if (two) {
      const answer = await two.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) });
      assert.fail(`the instance with another pepper started and answered ${answer.statusCode} to a valid key`);
    }

    const three = await buildTestGateway({ simulator, stores: await createRedisStores({ url: redis.url }), issueKeys: false });
    built.push(three);
    assert.equal((await three.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) })).statusCode, 200);
  });

  t.test('the instance with another webhook encryption key refuses to start, naming webhooks.encryptionKey', async () => {
    built.push(await buildTestGateway({ simulator, stores: await createRedisStores({ url: redis.url }), issueKeys: false }));
    const stores = await createRedisStores({ url: redis.url });
    const other = await buildTestGateway({ simulator, stores, issueKeys: false, config: { webhooks: { encryptionKey: Buffer.alloc(32, 9).toString('base64') } } }).catch(async (error: unknown) => {
      await stores.close();
      assert.ok(error instanceof ConfigError, String(error));
      assert.match(error.message, /webhooks\.encryptionKey/);
      assert.doesNotMatch(error.message, /keys\.pepper/);
      return undefined;
    });
    if (other) {
      built.push(other);
      assert.fail('the instance with another webhook encryption key started');
    }
  });

  t.test('the key CLI with another pepper refuses (78) rather than issue a key no gateway accepts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rg-pepper-cli-'));
    writeFileSync(join(dir, 'gateway.json'), '{}');
    const run = async (pepper: string) => {
      let stderr = '';
      const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: redis.url, KEY_PEPPER: pepper, AUDIT_LOG_FILE: join(dir, 'audit.log'), ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'), CONFIG_FILE: join(dir, 'gateway.json') };
      const code = await keysCli(BACKENDS, ['issue', '--account', 'acme', '--name', 'cli', '--scopes', 'none', '--json'], { out: () => undefined, err: (text) => (stderr += text), env });
      return { code, stderr };
    };
    try {
      const wrong = await run('another-pepper-0123456789abcdef0123456789');
      assert.equal(wrong.code, 78, wrong.stderr);
      assert.match(wrong.stderr, /keys\.pepper/);
      assert.equal((await run(TEST_PEPPER)).code, 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
