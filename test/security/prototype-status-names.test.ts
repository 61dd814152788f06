/**
 * Upstream enums are read through lookup tables (WHMCS statuses and types, FOSSBilling statuses
 * and pricing types). A value named like an Object.prototype member ("constructor") must read as
 * any other unknown value: the explicit `other` bucket, or refused as unreadable (502). Found on
 * the prototype, it became a function in the v1 resource, and the response schema failed (500);
 * one such product made the whole catalog a 500.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer, buildTestGateway, type TestGateway } from '../helpers/gateway.js';
import { backendWith, FakeCall } from '../mappings/fossbilling/fake-call.js';
import * as fb from '../mappings/fossbilling/fixtures/answers.js';
import { FakeWhmcs } from '../mappings/whmcs/fake-whmcs.js';
import * as wh from '../mappings/whmcs/fixtures/answers.js';

const get = (gw: TestGateway, url: string) => gw.app.inject({ method: 'GET', url, headers: bearer(gw.keys['acme:all']) });

t.test('FOSSBilling: status and pricing type "constructor"', async (t) => {
  const fake = new FakeCall()
    .answer('client/get', fb.client)
    .answer('product/get_list', fb.page([fb.hostingProduct, { ...fb.onceProduct, pricing: { ...fb.onceProduct.pricing, type: 'constructor' } }]))
    .answer('order/get_list', fb.page([{ ...fb.orderRow, status: 'constructor' }]));
  const gw = await buildTestGateway({ backend: backendWith(fake) });
  t.teardown(() => gw.close());

  const products = await get(gw, '/v1/products');
  assert.equal(products.statusCode, 200, products.body);
  assert.deepEqual(products.json().data.map((product: { id: string }) => product.id), [String(fb.hostingProduct.id)], 'the product of no known pricing type is not offered');
  const services = await get(gw, '/v1/services');
  assert.equal(services.statusCode, 502, services.body);
  assert.equal(services.json().reason, 'upstream_error');
});

t.test('WHMCS: statuses "Constructor"', async (t) => {
  const whmcs = new FakeWhmcs();
  const [order] = wh.orders.orders.order;
  const [invoice] = wh.invoices.invoices.invoice;
  whmcs
    .answer('GetClientsDetails', wh.clientDetailsFor)
    .answer('GetOrders', { ...wh.orders, orders: { order: [{ ...order, status: 'Constructor', paymentstatus: 'constructor' }] } })
    .answer('GetInvoices', { ...wh.invoices, invoices: { invoice: [{ ...invoice, userid: 1, status: 'constructor' }] } })
    .answer('GetClientsProducts', wh.clientsProducts([{ ...wh.service, status: 'Constructor' }]))
    .answer('GetCancelledPackages', wh.cancelledPackagesEmpty);
  const gw = await buildTestGateway({ backend: whmcs.backend() });
  t.teardown(async () => {
    await gw.close();
    await whmcs.close();
  });

  const read = await get(gw, '/v1/orders/1');
  assert.equal(read.statusCode, 200, read.body);
  assert.deepEqual([read.json().status, read.json().payment_status], ['other', 'other']);
  const invoices = await get(gw, '/v1/billing/invoices');
  assert.equal(invoices.statusCode, 200, invoices.body);
  assert.equal(invoices.json().data[0].status, 'other');
  // A service status has no `other`: refused.
  const services = await get(gw, '/v1/services');
  assert.equal(services.statusCode, 502, services.body);
  assert.equal(services.json().reason, 'upstream_error');
});
