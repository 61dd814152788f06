/**
 * WHMCS 8 refuses an action it does not know with HTTP 403, not with a business error of HTTP 200:
 * the API Authorization middleware throws AccessDenied ("Invalid API Action: ... is not a valid API
 * action"), an AbstractAuthorizationException whose DEFAULT_HTTP_CODE is 403 (WHMCS 8.7.2,
 * vendor/whmcs/whmcs-foundation/lib/Api/ApplicationSupport/Route/Middleware/Authorization.php).
 * So a cancel-revoke action that is not installed arrives as a 403; the operator must still be told
 * to install it, by the service action and by the doctor.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { diagnoseWhmcs } from '../../../mappings/whmcs/doctor.js';
import { CTX, CUSTOMER, FakeWhmcs, rejectsWith, testConfig } from './fake-whmcs.js';
import * as answers from './fixtures/answers.js';

const UNKNOWN_ACTION = { result: 'error', message: 'Invalid API Action: "gatewaydeletecancelrequest" is not a valid API action' };

t.test('a cancel-revoke action WHMCS does not know (HTTP 403)', async (t) => {
  let whmcs: FakeWhmcs;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
  });
  t.afterEach(() => whmcs.close());

  t.test('cancel_revoke tells the operator to install the action', async () => {
    whmcs
      .answer('GetClientsDetails', answers.clientDetails)
      .answer('GetProducts', answers.catalog)
      .answer('GetClientsProducts', answers.clientsProducts([answers.service]))
      .answer('GetCancelledPackages', answers.cancelledPackages)
      .answer('GatewayDeleteCancelRequest', UNKNOWN_ACTION, { status: 403 });
    const error = await rejectsWith(whmcs.backend().runServiceAction(CUSTOMER, '1', 'cancel_revoke', CTX), 'upstream_error');
    assert.match(error.operatorMessage ?? '', /install the custom WHMCS API action "GatewayDeleteCancelRequest"/);
    assert.equal(error.outcomeUnknown, false, 'WHMCS refused it before running anything');
  });

  t.test('the doctor fails the cancel-revoke check with the install instructions', async () => {
    whmcs.answer('GetCurrencies', { result: 'success', totalresults: 1 }).answer('GatewayDeleteCancelRequest', UNKNOWN_ACTION, { status: 403 });
    const checks = await diagnoseWhmcs(testConfig(), { serviceActions: ['cancel_revoke'] }, { dispatcher: whmcs.agent });
    const revoke = checks.find((check) => check.id === 'cancel-revoke');
    assert.equal(revoke?.status, 'fail');
    assert.match(revoke?.detail ?? '', /GatewayDeleteCancelRequest is not usable: Invalid API Action/);
    assert.match(revoke?.fix ?? '', /Install the custom API action "GatewayDeleteCancelRequest"/);
  });
});
