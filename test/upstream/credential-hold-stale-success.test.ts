/**
 * A success that was sent before the credentials were refused (a call in flight when the secret
 * was changed in WHMCS) says nothing of the credentials now: it does not end the hold, so the calls
 * after it are not sent, each one more failed login towards WHMCS's ban.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createWhmcsClient } from '../../mappings/whmcs/client.js';
import { FakeWhmcs, rejectsWith, testConfig } from '../mappings/whmcs/fake-whmcs.js';

t.test('a success sent before the refusal does not end the credential hold', async (t) => {
  const whmcs = new FakeWhmcs();
  t.teardown(() => whmcs.close());
  // The first call is answered (it was accepted before the secret changed), after the refusal of the second.
  whmcs.answer('GetClientsDetails', { result: 'success', client: { id: 1 } }, { times: 1, delayMs: 300 });
  whmcs.answer('GetClientsDetails', { result: 'error', message: 'Authentication Failed' }, { status: 403 });
  const clock = 1_700_000_000_000;
  const gateway = createWhmcsClient(testConfig(), { dispatcher: whmcs.agent, logger: whmcs.logger, now: () => clock });
  const earlier = gateway.call('GetClientsDetails', { clientid: '1' });
  await rejectsWith(gateway.call('GetClientsDetails', { clientid: '2' }), 'upstream_error');
  await earlier;
  const held = await rejectsWith(gateway.call('GetClientsDetails', { clientid: '3' }), 'unavailable');
  assert.equal(held.retryAfterMs, 5_000, 'the hold the refusal started still lasts');
  assert.equal(whmcs.requests().length, 2, 'nothing sent after the refusal');
});
