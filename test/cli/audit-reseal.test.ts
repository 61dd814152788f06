/**
 * A `webhook-secrets reseal` that finds an endpoint whose secret none of the keys opens ends with
 * exit 1; its audit record says so as the admin API would: refused, 409 webhook_state_conflict (the
 * endpoint must be set again), not a `status` of null.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { keysCli } from '../../src/cli/keys.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import type { WebhookRecord } from '../../src/stores/webhook-types.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { TEST_PEPPER, TEST_WEBHOOK_KEY } from '../helpers/gateway.js';
import { startRedisServer } from '../helpers/redis.js';

t.test('reseal with a secret no key opens: exit 1, recorded as 409 webhook_state_conflict', async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const dir = mkdtempSync(join(tmpdir(), 'rg-cli-reseal-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'gateway.json'), '{}');
  const auditFile = join(dir, 'admin-audit.log');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    REDIS_URL: redis.url,
    KEY_PEPPER: TEST_PEPPER,
    WEBHOOK_ENCRYPTION_KEY: TEST_WEBHOOK_KEY,
    CONFIG_FILE: join(dir, 'gateway.json'),
    ADMIN_AUDIT_LOG_FILE: auditFile,
  };
  const cli = async (...args: string[]) => {
    let stderr = '';
    const code = await keysCli(BACKENDS, args, { out: () => undefined, err: (text) => (stderr += text), env });
    return { code, stderr };
  };
  for (const [id, upstream] of [['sealed', '51'], ['lost', '52']] as const) {
    const added = await cli('account', 'add', id, '--name', id, '--upstream-id', upstream);
    assert.equal(added.code, 0, added.stderr);
  }
  const endpoint = (secret: string): WebhookRecord => ({
    url: 'https://example.com/hook',
    secret,
    previousSecret: null,
    previousSecretExpiresAt: null,
    updatedAt: new Date().toISOString(),
    status: 'enabled',
    disabledReason: null,
    lastDelivery: null,
    failingSince: null,
    reportFrom: null,
  });
  const stores = await createRedisStores({ url: redis.url });
  await stores.webhooks.set('sealed', endpoint(new SecretBox(Buffer.from(TEST_WEBHOOK_KEY, 'base64')).seal('whsec_one')), null);
  await stores.webhooks.set('lost', endpoint(new SecretBox(Buffer.alloc(32, 9)).seal('whsec_two')), null);
  await stores.close();

  const reseal = await cli('webhook-secrets', 'reseal');
  assert.equal(reseal.code, 1, reseal.stderr);
  const record = JSON.parse(readFileSync(auditFile, 'utf8').trim().split('\n').at(-1) as string) as Record<string, unknown>;
  assert.deepEqual(
    [record.operation, record.status, record.outcome, record.reason, record.exit_code],
    ['resealWebhookSecrets', 409, 'refused', 'webhook_state_conflict', 1],
  );
});
