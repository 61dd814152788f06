/**
 * Rotating the two server secrets on a shared Redis: KEY_PEPPER (keys.previousPeppers) and
 * WEBHOOK_ENCRYPTION_KEY (webhooks.previousEncryptionKeys). A key issued under the old pepper keeps
 * working and is hashed again with the new one; an endpoint's secret sealed with the old key keeps
 * signing (the same secret) and `reseller-keys webhook-secrets reseal` seals it with the new one; the
 * boot's fingerprint check accepts the rotation, records the new value, and still refuses an
 * unrelated one (exit 78), as the key CLI does.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { startWhmcsSimulator, type WhmcsSimulator } from '../../simulators/whmcs/server.js';
import { keysCli } from '../../src/cli/keys.js';
import { ConfigError } from '../../src/config.js';
import { hashSecret, parseApiKey } from '../../src/keys/api-key.js';
import { KeyService } from '../../src/keys/key-service.js';
import { loadConfig } from '../../src/load-config.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { bearer, buildTestGateway, TEST_PEPPER, TEST_WEBHOOK_KEY, type TestGateway } from '../helpers/gateway.js';
import { call } from '../helpers/http.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';
import { eventually, startReceiver, verify, type Receiver } from '../helpers/webhook-receiver.js';

const PEPPER_2 = 'second-pepper-0123456789abcdef0123456789ab';
const PEPPER_3 = 'third-pepper-0123456789abcdef0123456789abc';
const KEY_2 = Buffer.alloc(32, 8).toString('base64');
const KEY_3 = Buffer.alloc(32, 9).toString('base64');

t.test('the environment lists the previous secrets', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-rotation-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'gateway.json');
  writeFileSync(file, '{}');
  const config = loadConfig(BACKENDS, {
    CONFIG_FILE: file,
    KEY_PEPPER: PEPPER_2,
    KEY_PREVIOUS_PEPPERS: `${TEST_PEPPER}, ${PEPPER_3}`,
    WEBHOOK_ENCRYPTION_KEY: KEY_2,
    WEBHOOK_PREVIOUS_ENCRYPTION_KEYS: `${TEST_WEBHOOK_KEY},${KEY_3}`,
  });
  assert.deepEqual(config.keys.previousPeppers, [TEST_PEPPER, PEPPER_3]);
  assert.deepEqual(config.webhooks.previousEncryptionKeys, [TEST_WEBHOOK_KEY, KEY_3]);
  assert.throws(() => loadConfig(BACKENDS, { CONFIG_FILE: file, WEBHOOK_PREVIOUS_ENCRYPTION_KEYS: 'c2hvcnQ=' }), /webhooks\.previousEncryptionKeys\.0: must be 32 random bytes/);
});

t.test('rotation on a shared Redis', async (t) => {
  let redis: RedisServer;
  let simulator: WhmcsSimulator;
  let receiver: Receiver;
  const built: TestGateway[] = [];
  t.beforeEach(async () => {
    redis = await startRedisServer();
  });
  t.afterEach(async () => {
    await Promise.all(built.splice(0).map((gw) => gw.close()));
    await redis.stop();
  });
  t.before(async () => {
    simulator = await startWhmcsSimulator();
    receiver = await startReceiver();
  });
  t.teardown(async () => {
    await receiver.close();
    await simulator.close();
  });

  /** A gateway on the shared Redis, or the ConfigError that stopped its boot. */
  const boot = async (config: Record<string, unknown>, options: { issueKeys?: boolean; runWebhooks?: boolean } = {}): Promise<TestGateway | ConfigError> => {
    const stores = await createRedisStores({ url: redis.url });
    try {
      const gw = await buildTestGateway({ simulator, stores, issueKeys: options.issueKeys ?? false, runWebhooks: options.runWebhooks ?? false, config });
      built.push(gw);
      return gw;
    } catch (error) {
      await stores.close();
      if (error instanceof ConfigError) return error;
      throw error;
    }
  };
  const started = (gw: TestGateway | ConfigError): TestGateway => {
    if (gw instanceof ConfigError) assert.fail(`refused to start: ${gw.message}`);
    return gw;
  };
  const stop = async (gw: TestGateway): Promise<void> => {
    built.splice(built.indexOf(gw), 1);
    await gw.close();
  };
  const storedHash = async (keyId: string): Promise<string | undefined> => {
    const stores = await createRedisStores({ url: redis.url });
    try {
      return (await stores.keys.getKey(keyId))?.secretHash;
    } finally {
      await stores.close();
    }
  };

  t.test('pepper: P1 → P2 with [P1] → P2 alone; P3 alone is refused', async () => {
    const first = started(await boot({}, { issueKeys: true }));
    const key = first.keys['acme:all'] as string;
    const { keyId, secret } = parseApiKey(key) ?? assert.fail('a key');
    assert.equal(await storedHash(keyId), hashSecret(secret, TEST_PEPPER));
    await stop(first);

    // Phase one of a rolling rotation: the new pepper accepted everywhere, the old one still current.
    const behind = started(await boot({ keys: { pepper: TEST_PEPPER, previousPeppers: [PEPPER_2] } }));
    // Phase two: the new pepper current, the old one accepted.
    const rotated = started(await boot({ keys: { pepper: PEPPER_2, previousPeppers: [TEST_PEPPER] } }));
    assert.equal((await rotated.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) })).statusCode, 200);
    await eventually(async () => (await storedHash(keyId)) === hashSecret(secret, PEPPER_2), 'the key hashed again with the current pepper');
    const wrong = `rk_${keyId}_${'A'.repeat(43)}`;
    assert.equal((await rotated.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(wrong) })).statusCode, 401, 'a wrong secret is refused still');

    // The instance left behind accepts the rehashed key and does not hash it back to the old pepper.
    assert.equal((await behind.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) })).statusCode, 200);
    await sleep(300);
    assert.equal(await storedHash(keyId), hashSecret(secret, PEPPER_2));
    await stop(behind);
    await stop(rotated);

    const only = started(await boot({ keys: { pepper: PEPPER_2 } }));
    assert.equal((await only.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) })).statusCode, 200);
    assert.equal(await storedHash(keyId), hashSecret(secret, PEPPER_2));
    await stop(only);

    const unrelated = await boot({ keys: { pepper: PEPPER_3 } });
    assert.ok(unrelated instanceof ConfigError, 'an unrelated pepper must not start');
    assert.match(unrelated.message, /keys\.pepper/);
    assert.doesNotMatch(unrelated.message, new RegExp(`${PEPPER_2}|${TEST_PEPPER}|${PEPPER_3}`), 'no pepper in the message');
  });

  t.test('pepper: P2 alone while the store still records P1 is refused (no previous pepper given)', async () => {
    const first = started(await boot({}, { issueKeys: true }));
    await first.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(first.keys['acme:all']) });
    await stop(first);
    const refused = await boot({ keys: { pepper: PEPPER_2 } });
    assert.ok(refused instanceof ConfigError);
  });

  t.test('encryption key: K1 → K2 with [K1] → reseal → K2 alone; K3 alone is refused; the signing secret never changes', async () => {
    receiver.received.length = 0;
    receiver.answer = () => ({ status: 200 });
    const webhooks = { allowPrivateTargets: true, pollIntervalMs: 200, workerIntervalMs: 30 };
    const first = started(await boot({ webhooks }, { issueKeys: true, runWebhooks: true }));
    const key = first.keys['acme:all'] as string;
    const base = await first.app.listen({ host: '127.0.0.1', port: 0 });
    const set = await call(base, 'PUT', '/v1/webhooks', { key, body: { url: receiver.url } });
    assert.equal(set.status, 200, set.text);
    const secret = set.json().secret as string;
    verify(secret, await eventually(async () => receiver.received.find((r) => r.event.type === 'webhook.test'), 'the test event'));
    await stop(first);

    // The rotated instance opens the old seal and signs with the same secret.
    const rotated = started(await boot({ webhooks: { ...webhooks, encryptionKey: KEY_2, previousEncryptionKeys: [TEST_WEBHOOK_KEY] } }, { runWebhooks: true }));
    const rotatedBase = await rotated.app.listen({ host: '127.0.0.1', port: 0 });
    const before = await call(rotatedBase, 'POST', '/v1/services/1/actions', { key, body: { action: 'reboot' }, headers: { 'idempotency-key': 'rotation-0' } });
    assert.equal(before.status, 200, before.text);
    verify(secret, await eventually(async () => receiver.received.find((r) => r.event.type === 'service.action.succeeded'), 'an event signed after the rotation'));
    receiver.received.length = 0;

    const dir = mkdtempSync(join(tmpdir(), 'rg-reseal-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'gateway.json'), '{}');
    const reseal = async (previous: string) => {
      let stdout = '';
      let stderr = '';
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        REDIS_URL: redis.url,
        KEY_PEPPER: TEST_PEPPER,
        WEBHOOK_ENCRYPTION_KEY: KEY_2,
        WEBHOOK_PREVIOUS_ENCRYPTION_KEYS: previous,
        CONFIG_FILE: join(dir, 'gateway.json'),
        ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'),
      };
      const code = await keysCli(BACKENDS, ['webhook-secrets', 'reseal', '--json'], { out: (text) => (stdout += text), err: (text) => (stderr += text), env });
      return { code, stdout, stderr };
    };
    const firstRun = await reseal(TEST_WEBHOOK_KEY);
    assert.equal(firstRun.code, 0, firstRun.stderr);
    assert.deepEqual(JSON.parse(firstRun.stdout), { resealed: 1, current: 0, unopenable: [] });
    const again = await reseal(TEST_WEBHOOK_KEY);
    assert.deepEqual(JSON.parse(again.stdout), { resealed: 0, current: 1, unopenable: [] }, 'nothing is sealed with the old key any more');
    assert.doesNotMatch(firstRun.stdout + again.stdout, new RegExp(secret));

    const stores = await createRedisStores({ url: redis.url });
    const record = await stores.webhooks.get('acme');
    await stores.close();
    assert.equal(new SecretBox(Buffer.from(KEY_2, 'base64')).open(record?.secret as string), secret, 'sealed with the new key, the same secret');
    assert.throws(() => new SecretBox(Buffer.from(TEST_WEBHOOK_KEY, 'base64')).open(record?.secret as string));
    await stop(rotated);

    const only = started(await boot({ webhooks: { ...webhooks, encryptionKey: KEY_2 } }, { runWebhooks: true }));
    const onlyBase = await only.app.listen({ host: '127.0.0.1', port: 0 });
    const acted = await call(onlyBase, 'POST', '/v1/services/1/actions', { key, body: { action: 'reboot' }, headers: { 'idempotency-key': 'rotation-1' } });
    assert.equal(acted.status, 200, acted.text);
    const announced = await eventually(async () => receiver.received.find((r) => r.event.type === 'service.action.succeeded'), 'an event signed after the old key is gone');
    verify(secret, announced);
    await stop(only);

    const unrelated = await boot({ webhooks: { ...webhooks, encryptionKey: KEY_3 } });
    assert.ok(unrelated instanceof ConfigError, 'an unrelated key must not start');
    assert.match(unrelated.message, /webhooks\.encryptionKey/);
    const cli = await reseal('');
    assert.equal(cli.code, 0, 'the CLI with K2 alone is accepted');
    const dir3 = { ...process.env, REDIS_URL: redis.url, KEY_PEPPER: TEST_PEPPER, WEBHOOK_ENCRYPTION_KEY: KEY_3, CONFIG_FILE: join(dir, 'gateway.json'), ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log') };
    let stderr = '';
    assert.equal(await keysCli(BACKENDS, ['webhook-secrets', 'reseal'], { out: () => undefined, err: (text) => (stderr += text), env: dir3 }), 78);
    assert.match(stderr, /webhooks\.encryptionKey/);
  });
});

t.test('memory stores: a key under a previous pepper authenticates and is hashed again; a wrong secret tries every pepper', async () => {
  const { MemoryKeyStore } = await import('../../src/stores/memory/key-store.js');
  const store = new MemoryKeyStore();
  const old = new KeyService(store, TEST_PEPPER);
  await old.createAccount({ id: 'acme', name: 'Acme', upstreamId: '1' });
  const { key, record } = await old.issue({ accountId: 'acme', name: 'k', scopes: [] });
  const rotated = new KeyService(store, PEPPER_2, { previousPeppers: [PEPPER_3, TEST_PEPPER] });
  const { secret } = parseApiKey(key) ?? assert.fail('a key');
  assert.equal(typeof (await rotated.authenticate(key)), 'object');
  await eventually(async () => (await store.getKey(record.id))?.secretHash === hashSecret(secret, PEPPER_2), 'hashed again');
  assert.equal(await rotated.authenticate(`rk_${record.id}_${'A'.repeat(43)}`), 'unknown');
  assert.equal(await new KeyService(store, PEPPER_3).authenticate(key), 'unknown', 'a pepper that is neither refuses');
});
