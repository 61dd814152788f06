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

/**
 * The two answers of a custom action WHMCS cannot run: not registered in its API catalog (HTTP 403,
 * Authorization.php), or registered and allowed but its file missing from includes/api (HTTP 200
 * "Command Not Found": HandleProcessor::getApiFilePath finds no file).
 */
const UNUSABLE: Array<[string, number, { result: string; message: string }, RegExp]> = [
  ['not registered (HTTP 403)', 403, { result: 'error', message: 'Invalid API Action: "gatewaydeletecancelrequest" is not a valid API action' }, /Invalid API Action/],
  ['registered, its file missing (HTTP 200)', 200, { result: 'error', message: 'Command Not Found' }, /Command Not Found/],
];

for (const [what, status, answer, message] of UNUSABLE) {
  t.test(`a cancel-revoke action WHMCS cannot run: ${what}`, async (t) => {
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
        .answer('GatewayDeleteCancelRequest', answer, { status });
      const error = await rejectsWith(whmcs.backend().runServiceAction(CUSTOMER, '1', 'cancel_revoke', CTX), 'upstream_error');
      assert.match(error.operatorMessage ?? '', /install the custom WHMCS API action "GatewayDeleteCancelRequest"/);
      assert.equal(error.outcomeUnknown, false, 'WHMCS refused it before running anything');
    });

    t.test('the doctor fails the cancel-revoke check with the install instructions', async () => {
      whmcs.answer('GetCurrencies', { result: 'success', totalresults: 1 }).answer('GatewayDeleteCancelRequest', answer, { status });
      const checks = await diagnoseWhmcs(testConfig(), { serviceActions: ['cancel_revoke'] }, { dispatcher: whmcs.agent });
      const revoke = checks.find((check) => check.id === 'cancel-revoke');
      assert.equal(revoke?.status, 'fail');
      assert.match(revoke?.detail ?? '', new RegExp(`GatewayDeleteCancelRequest is not usable: ${message.source}`));
      assert.match(revoke?.fix ?? '', /Install the custom API action "GatewayDeleteCancelRequest"/);
    });
  });
}
