/**
 * A rolling deploy onto a Redis the previous release's instances already use. Those never record
 * the key pepper's or the webhook sealing key's fingerprint ({keys}:pepper, {webhooks}:sealing-key),
 * so the first instance of this release to boot is the one whose settings become "the" settings.
 * When that instance is the misconfigured one (another KEY_PEPPER or WEBHOOK_ENCRYPTION_KEY than the
 * one the stored keys and secrets were made with), it must not start refusing the correctly
 * configured instances after it: the records already stored, not the first boot, tell which is right.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { startWhmcsSimulator, type WhmcsSimulator } from '../../simulators/whmcs/server.js';
import { ConfigError } from '../../src/config.js';
import { KeyService } from '../../src/keys/key-service.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { bearer, buildTestGateway, TEST_PEPPER, TEST_WEBHOOK_KEY, type TestGateway } from '../helpers/gateway.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';
import { webhookRecord } from '../stores/conformance.js';

const WRONG_PEPPER = 'another-pepper-0123456789abcdef0123456789';
const WRONG_WEBHOOK_KEY = Buffer.alloc(32, 9).toString('base64');

t.test('the previous release\'s records on the shared Redis, no fingerprints yet', async (t) => {
  let redis: RedisServer;
  let simulator: WhmcsSimulator;
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
  });
  t.teardown(async () => simulator.close());

  /** A gateway of this release on the shared Redis, or the ConfigError that stopped its boot. */
  const boot = async (config: Record<string, unknown>): Promise<TestGateway | ConfigError> => {
    const stores = await createRedisStores({ url: redis.url });
    try {
      const gw = await buildTestGateway({ simulator, stores, issueKeys: false, config });
      built.push(gw);
      return gw;
    } catch (error) {
      await stores.close();
      if (error instanceof ConfigError) return error;
      throw error;
    }
  };

  t.test('a first new instance with another pepper does not lock the right pepper out', async () => {
    // The previous release issued keys (with the fleet's pepper) and recorded no fingerprint.
    const old = await createRedisStores({ url: redis.url });
    const keys = new KeyService(old.keys, TEST_PEPPER);
    await keys.createAccount({ id: 'acme', name: 'Acme', upstreamId: '1' });
    const { key } = await keys.issue({ accountId: 'acme', name: 'old', scopes: ['read:products'] });
    await old.close();

    const wrong = await boot({ keys: { pepper: WRONG_PEPPER } });
    if (!(wrong instanceof ConfigError)) {
      assert.equal((await wrong.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) })).statusCode, 401, 'its pepper is not the keys\' one');
    }
    const right = await boot({ keys: { pepper: TEST_PEPPER } });
    assert.ok(!(right instanceof ConfigError), `the instance with the keys' own pepper was refused: ${String(right)}`);
    assert.equal((await right.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) })).statusCode, 200);
    // Once a key proved this pepper, it is the one recorded: the wrong one is refused from then on.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const later = await boot({ keys: { pepper: WRONG_PEPPER } });
    assert.ok(later instanceof ConfigError, 'the wrong pepper is refused once the right one is known');
    assert.match(later.message, /keys\.pepper/);
  });

  t.test('a new instance with another webhook encryption key than the stored secrets\' is refused', async () => {
    const old = await createRedisStores({ url: redis.url });
    const keys = new KeyService(old.keys, TEST_PEPPER);
    await keys.createAccount({ id: 'acme', name: 'Acme', upstreamId: '1' });
    const sealed = new SecretBox(Buffer.from(TEST_WEBHOOK_KEY, 'base64')).seal('whsec_previous-release');
    await old.webhooks.set('acme', webhookRecord('https://hooks.example.com/in', sealed, new Date().toISOString()), null);
    await old.close();

    const wrong = await boot({ webhooks: { encryptionKey: WRONG_WEBHOOK_KEY } });
    assert.ok(wrong instanceof ConfigError, 'the instance that cannot open the stored secrets started');
    assert.match(wrong.message, /webhooks\.encryptionKey/);
    const right = await boot({ webhooks: { encryptionKey: TEST_WEBHOOK_KEY } });
    assert.ok(!(right instanceof ConfigError), `the instance with the secrets' own key was refused: ${String(right)}`);
  });
});
