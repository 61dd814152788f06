/**
 * WHMCS mapping details a reseller acts on:
 * - a pending cancellation request shows on a suspended service too (suspended is still running:
 *   the request will still take effect), and an "Immediate" request has no effective date (it is
 *   not deferred to the next due date: only "End of Billing Period" is);
 * - the invoice PDF's "amount paid" is what was paid of the total (total − balance), not the total:
 *   a partly paid invoice must not read as paid in full.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { CTX, CUSTOMER, FakeWhmcs } from './fake-whmcs.js';
import * as answers from './fixtures/answers.js';

t.test('WHMCS cancellation requests and amount paid', async (t) => {
  let whmcs: FakeWhmcs;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
    whmcs.answer('GetClientsDetails', answers.clientDetailsFor);
  });
  t.afterEach(() => whmcs.close());

  t.test('a suspended service shows its pending request; an Immediate request has no effective date', async () => {
    const request = answers.cancellationRow;
    whmcs
      .answer('GetClientsProducts', answers.clientsProducts([
        { ...answers.service, id: '1', status: 'Suspended' },
        { ...answers.service, id: '2', status: 'Active' },
      ]))
      .answer('GetCancelledPackages', { ...answers.cancelledPackages, totalresults: '2', packages: { package: [request, { ...request, id: '2', relid: '2', type: 'Immediate' }] } });
    const { items } = await whmcs.backend().listServices(CUSTOMER, { page: 1, perPage: 25 }, CTX);
    assert.deepEqual(
      items.map((item) => [item.id, item.status, item.cancellation_requested, item.cancellation_effective_on]),
      [
        ['1', 'suspended', true, '2024-02-01'],
        ['2', 'active', true, null],
      ],
    );
  });

  t.test('a partly paid invoice: amount paid is total less balance', async () => {
    whmcs.answer('GetInvoice', { ...answers.invoice, userid: 1, balance: '5.95' });
    const document = await whmcs.backend().getInvoiceDocument(CUSTOMER, '1', CTX);
    assert.deepEqual(document.total, { amount: '15.95', currency: 'USD' });
    assert.deepEqual(document.balance, { amount: '5.95', currency: 'USD' });
    assert.deepEqual(document.amount_paid, { amount: '10.00', currency: 'USD' });
  });
});
