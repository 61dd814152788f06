/**
 * Single-record reads do not rest on WHMCS's owner filter. The upstream here ignores `clientid` and
 * `userid` and answers with client 1's service, order and invoice whoever asks: the gateway must
 * still answer another account 404 (contract: a record of another account is not found), show it
 * nothing of the record, send no write for it, and tell the operator that the filter was ignored.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { FakeWhmcs, SERVICE_PASSWORD } from '../mappings/whmcs/fake-whmcs.js';
import * as answers from '../mappings/whmcs/fixtures/answers.js';
import { bearer, buildTestGateway, type TestGateway } from '../helpers/gateway.js';

/** Strings of client 1's records that must never reach another account. */
const PRIVATE = [SERVICE_PASSWORD, 'vps1.example.com', '198.51.100.10', '7858259149'];

t.test('an upstream that ignores the owner filter on single-record reads', async (t) => {
  let whmcs: FakeWhmcs;
  let gw: TestGateway;
  t.before(async () => {
    whmcs = new FakeWhmcs();
    whmcs
      .answer('GetClientsProducts', answers.clientsProducts([answers.service]))
      .answer('GetClientsDetails', answers.clientDetailsFor)
      .answer('GetCancelledPackages', answers.cancelledPackagesEmpty)
      .answer('GetOrders', answers.orders)
      .answer('GetInvoice', { ...answers.invoice, userid: 1 })
      .answer('ModuleReboot', answers.moduleSuccess)
      .answer('ModuleCustom', answers.moduleSuccess);
    // The test gateway's accounts: acme is WHMCS client 1 (the owner), beta client 2.
    gw = await buildTestGateway({ backend: whmcs.backend() });
  });
  t.teardown(async () => {
    await gw.close();
    await whmcs.close();
  });

  const get = (label: string, url: string) => gw.app.inject({ method: 'GET', url, headers: bearer(gw.keys[label]) });

  for (const url of ['/v1/services/1', '/v1/services/1/credentials', '/v1/orders/1', '/v1/billing/invoices/1/pdf']) {
    t.test(`GET ${url}: the owner reads it, another account gets 404 and nothing of it`, async () => {
      assert.equal((await get('acme:all', url)).statusCode, 200, 'the fake answers the owner');
      const errorsBefore = gw.logs.filter((line) => line.includes('"level":50')).length;
      const other = await get('beta:all', url);
      assert.equal(other.statusCode, 404, other.body);
      assert.equal(other.json().reason, 'not_found');
      for (const secret of PRIVATE) assert.ok(!other.body.includes(secret), `the answer shows ${secret}`);
      if (url !== '/v1/billing/invoices/1/pdf') {
        const logged = gw.logs.filter((line) => line.includes('"level":50')).slice(errorsBefore);
        assert.ok(logged.some((line) => /owner filter was ignored/.test(line)), 'the operator is told');
      }
    });
  }

  t.test('a service action on it: 404, and nothing is sent to WHMCS', async () => {
    const writesBefore = whmcs.actions().filter((action) => action.startsWith('Module')).length;
    const response = await gw.app.inject({
      method: 'POST',
      url: '/v1/services/1/actions',
      headers: { ...bearer(gw.keys['beta:all']), 'content-type': 'application/json', 'idempotency-key': 'owner-filter-1' },
      payload: { action: 'reboot' },
    });
    assert.equal(response.statusCode, 404, response.body);
    assert.equal(whmcs.actions().filter((action) => action.startsWith('Module')).length, writesBefore);
  });
});
