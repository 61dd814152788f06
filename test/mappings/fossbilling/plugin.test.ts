import assert from 'node:assert/strict';
import t from 'tap';
import { fossbillingPlugin } from '../../../mappings/fossbilling/plugin.js';
import { startFossbillingSandbox } from '../../../simulators/fossbilling/sandbox.js';
import { CTX } from './fake-call.js';

t.test('FOSSBilling backend plugin', async (t) => {
  t.test('describes its upstream without the token', async () => {
    const config = fossbillingPlugin.configSchema.parse({ url: 'https://billing.example.com/fb/', apiToken: 'secret-token' });
    assert.equal(fossbillingPlugin.describe(config), 'fossbilling at https://billing.example.com/fb');
  });

  t.test('serves both demo accounts from its sandbox upstream', async () => {
    const sandbox = await startFossbillingSandbox();
    const backend = fossbillingPlugin.create(sandbox.config, { logger: { warn() {}, error() {} } });
    try {
      const [first, second] = sandbox.customerIds;
      const a = await backend.getAccount({ accountId: 'acme', upstreamId: first }, CTX);
      const b = await backend.getAccount({ accountId: 'beta', upstreamId: second }, CTX);
      assert.notEqual(a.email, b.email);
      assert.equal(await backend.ping(), true);
    } finally {
      await backend.close();
      await sandbox.close();
    }
  });
});
