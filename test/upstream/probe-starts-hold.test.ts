/**
 * A write that would be the breaker's trial sends the health probe first; when WHMCS refuses the
 * probe for the gateway's credentials, the probe's answer closes the breaker and starts a credential
 * hold. The write must then be held too (503, unsent): sent, it is one more failed login towards
 * the ban of the gateway's address that the hold exists to prevent.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createWhmcsClient } from '../../mappings/whmcs/client.js';
import { CredentialHoldError } from '../../src/upstream/credential-hold.js';
import { FakeWhmcs, rejectsWith, testConfig } from '../mappings/whmcs/fake-whmcs.js';
import * as answers from '../mappings/whmcs/fixtures/answers.js';

const OPEN_MS = 10_000;
const THRESHOLD = 3;

t.test('WHMCS: a write after a probe refused for the credentials is held, not sent', async (t) => {
  const whmcs = new FakeWhmcs();
  t.teardown(() => whmcs.close());
  let clock = 1_700_000_000_000;
  const client = createWhmcsClient(testConfig({ circuitBreaker: { failureThreshold: THRESHOLD, openMs: OPEN_MS } }), {
    dispatcher: whmcs.agent,
    logger: whmcs.logger,
    now: () => clock,
  });
  whmcs.refuse('GetInvoices');
  for (let page = 0; page < THRESHOLD; page += 1) await rejectsWith(client.call('GetInvoices', { limitstart: page }), 'unavailable');
  clock += OPEN_MS;
  whmcs.answer('GetCurrencies', answers.refusals.auth, { status: 403 }).answer('AddOrder', answers.addOrder);

  const error = await rejectsWith(client.call('AddOrder', { clientid: '1' }), 'unavailable');
  assert.equal(whmcs.requests('GetCurrencies').length, 1, 'the probe went first');
  assert.equal(whmcs.requests('AddOrder').length, 0, 'the write is not sent into the hold its probe started');
  assert.ok(error instanceof CredentialHoldError, `held (${error.name})`);
  assert.equal(error.outcomeUnknown, false);
});
