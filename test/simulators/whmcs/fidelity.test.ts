/**
 * The WHMCS simulator against WHMCS's own source (decoded WHMCS 8.7.2 and 7.8.0, public mirrors
 * MarkezTH/WHMCS-8.7.2-Decoded and puarudz/WHMCS-7.8.0-decoded), and the mapping against the
 * answers in WHMCS's real form.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { request } from 'undici';
import { startWhmcsSimulator, type WhmcsSimulator } from '../../../simulators/whmcs/server.js';
import { CUSTOMER, FakeWhmcs } from '../../mappings/whmcs/fake-whmcs.js';
import * as answers from '../../mappings/whmcs/fixtures/answers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

async function call(sim: WhmcsSimulator, action: string, fields: Record<string, string>): Promise<Json> {
  const response = await request(sim.apiUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ identifier: sim.identifier, secret: sim.secret, action, responsetype: 'json', ...fields }).toString(),
  });
  return JSON.parse(await response.body.text());
}

const CTX = { requestId: 'req-review', idempotencyKey: 'key-1', idempotencyRecord: 'rec-1', beforeWrite: async () => undefined };

t.test('simulator: AddOrder invoices as WHMCS does', async (t) => {
  let sim: WhmcsSimulator;
  t.beforeEach(async () => {
    sim = await startWhmcsSimulator();
  });
  t.afterEach(() => sim.close());

  // orderfunctions.php calcCartTotals: an invoice item only `if ($billingcycle != "free" && 0 <=
  // $product_onetime)`; processinvoices.php createInvoices skips "Free Account" services, so no
  // invoice is created, and addorder.php answers `invoiceid` from tblorders.invoiceid ("0").
  t.test('a free product gets no invoice: invoiceid "0", and the order shows none', async () => {
    const invoicesBefore = sim.state.invoices.length;
    const placed = await call(sim, 'AddOrder', { clientid: '2', paymentmethod: 'paypal', pid: '6' });
    assert.equal(placed.result, 'success');
    assert.equal(placed.invoiceid, '0');
    assert.equal(sim.state.invoices.length, invoicesBefore, 'no invoice created');
    const order = (await call(sim, 'GetOrders', { id: placed.orderid })).orders.order[0];
    assert.deepEqual([order.invoiceid, order.paymentstatus], [0, null]);
  });

  // orderfunctions.php calcCartTotals: `if (0 < $product_setup)` a separate item of type "Setup",
  // "<product name> " . $_LANG["ordersetupfee"] ("Setup Fee", lang/english.php), then the Hosting
  // item for $singleProductOnetime (the price without the setup fee).
  t.test('a setup fee is its own "Setup" invoice item', async () => {
    const placed = await call(sim, 'AddOrder', { clientid: '2', paymentmethod: 'paypal', pid: '3', billingcycle: 'monthly' });
    const invoice = await call(sim, 'GetInvoice', { invoiceid: placed.invoiceid });
    const items = invoice.items.item.map((item: Json) => [item.type, item.relid, item.amount]);
    const serviceId = Number(placed.serviceids);
    assert.deepEqual(items, [
      ['Setup', serviceId, '9.00'],
      ['Hosting', serviceId, '38.69'],
    ]);
    assert.match(invoice.items.item[0].description, / Setup Fee$/);
    assert.equal(invoice.subtotal, '47.69', 'the first payment: EUR 35.99 + 9.00 setup + the default options');
  });
});

// getclientsproducts.php (7.8.0 and 8.7.2): `if (!$totalresults) { $apiresults["products"] = ""; }`,
// then rows are appended; a page past the last row leaves `products` out altogether.
t.test('simulator: GetClientsProducts past the last page has no products key', async () => {
  const sim = await startWhmcsSimulator();
  try {
    const page = await call(sim, 'GetClientsProducts', { clientid: '1', limitstart: '500', limitnum: '25' });
    assert.equal(page.numreturned, 0);
    assert.notEqual(page.totalresults, '0');
    assert.equal('products' in page, false);
    const none = await call(sim, 'GetClientsProducts', { clientid: '999' });
    assert.equal(none.products, '');
  } finally {
    await sim.close();
  }
});

t.test('mapping: WHMCS real forms', async (t) => {
  let whmcs: FakeWhmcs;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
  });
  t.afterEach(() => whmcs.close());

  t.test('a free order: AddOrder invoiceid "0", GetOrders invoiceid 0 and paymentstatus null', async () => {
    whmcs
      .answer('GetProducts', answers.catalog)
      .answer('GetClientsDetails', answers.clientDetails)
      .answer('AddOrder', { ...answers.addOrder, invoiceid: '0' })
      .answer('GetOrders', { ...answers.orders, orders: { order: [{ ...answers.orderRow, status: 'Pending', invoiceid: 0, paymentstatus: null }] } });
    const order = await whmcs.backend({ orderKeyField: { ids: { '4': 9 } } }).placeOrder(CUSTOMER, { product_id: '4', billing_cycle: 'free' }, CTX);
    assert.deepEqual([order.invoice_id, order.payment_status], [null, null]);
  });

  t.test('a services page past the end, without `products`', async () => {
    whmcs
      .answer('GetClientsDetails', answers.clientDetails)
      .answer('GetCancelledPackages', answers.cancelledPackagesEmpty)
      .answer('GetClientsProducts', { result: 'success', clientid: '1', serviceid: null, pid: null, domain: null, totalresults: '2', startnumber: 50, numreturned: 0 });
    const page = await whmcs.backend().listServices(CUSTOMER, { page: 3, perPage: 25 }, CTX);
    assert.deepEqual([page.items, page.total], [[], 2]);
  });
});
