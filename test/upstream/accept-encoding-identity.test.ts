/**
 * The upstream clients read answers as sent (undici's dispatch decodes no content coding), and a
 * request without Accept-Encoding accepts any coding (RFC 9110 §12.5.3): a server or CDN free to
 * gzip its answer would make every call fail as unreadable. Both clients ask for `identity`.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createWhmcsClient } from '../../mappings/whmcs/client.js';
import { FossbillingConfigSchema } from '../../mappings/fossbilling/config.js';
import { declareMethods } from '../../mappings/fossbilling/methods.js';
import { fossbillingProtocol } from '../../mappings/fossbilling/transport.js';
import { FakeWhmcs, testConfig } from '../mappings/whmcs/fake-whmcs.js';
import * as answers from '../mappings/whmcs/fixtures/answers.js';

t.test('WHMCS calls ask for an answer without content coding', async (t) => {
  const whmcs = new FakeWhmcs();
  t.teardown(() => whmcs.close());
  whmcs.answer('GetClientsDetails', answers.clientDetails);
  await createWhmcsClient(testConfig(), { dispatcher: whmcs.agent }).call('GetClientsDetails', { clientid: '1' });
  const [call] = whmcs.agent.getCallHistory()?.calls() ?? [];
  assert.equal((call?.headers as Record<string, string> | undefined)?.['accept-encoding'], 'identity');
});

t.test('FOSSBilling calls ask for an answer without content coding', async () => {
  const config = FossbillingConfigSchema.parse({ url: 'http://fossbilling.test', apiToken: 'token-secret-value' });
  const request = fossbillingProtocol(config).request(declareMethods(config)['order/get'], { id: 7 });
  assert.equal(request.headers['accept-encoding'], 'identity');
});
