/**
 * GetClientsDetails is asked by clientid; an upstream that answers another client's details (a
 * caching proxy in front of WHMCS, a routing fault) must not have them shown to this account: its
 * name and email on /v1/me and on its invoice PDF, its credit as the balance. FOSSBilling's
 * client/get is checked the same way (mappings/fossbilling/operations.ts).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer, buildTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { FakeWhmcs } from './fake-whmcs.js';
import * as answers from './fixtures/answers.js';

/** Client 1's details, whoever is asked for. */
const CLIENT_ONE = { ...answers.clientDetails, credit: '77.70', client: { ...answers.clientDetails.client, email: 'owner-one@example.com', credit: '77.70' } };

t.test('WHMCS answering GetClientsDetails with another client', async (t) => {
  let whmcs: FakeWhmcs;
  let gw: TestGateway;
  t.before(async () => {
    whmcs = new FakeWhmcs();
    whmcs.answer('GetClientsDetails', CLIENT_ONE).answer('GetInvoice', { ...answers.invoice, userid: 2 });
    // acme is WHMCS client 1, beta client 2.
    gw = await buildTestGateway({ backend: whmcs.backend() });
  });
  t.teardown(async () => {
    await gw.close();
    await whmcs.close();
  });

  t.test('its owner is served', async () => {
    const response = await gw.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(gw.keys['acme:all']) });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().account.email, 'owner-one@example.com');
  });

  for (const url of ['/v1/me', '/v1/billing/balance', '/v1/billing/invoices/1/pdf']) {
    t.test(`GET ${url} for another account: 502, nothing of the other client`, async () => {
      const response = await gw.app.inject({ method: 'GET', url, headers: bearer(gw.keys['beta:all']) });
      assert.equal(response.statusCode, 502, response.body);
      assert.equal(response.json().reason, 'upstream_error');
      assert.ok(!response.body.includes('owner-one@example.com') && !response.body.includes('77.70'), response.body);
      assert.ok(gw.logs.some((line) => line.includes('GetClientsDetails for client 2 answered client 1')), 'the operator is told');
    });
  }
});
