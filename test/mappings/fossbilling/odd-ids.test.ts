/**
 * Ids a FOSSBilling answer writes with leading zeros ("007") or as 0 reach v1, whose ids are
 * positive digits without leading zeros (IdSchema). Through the gateway they must be read as the
 * id they are, or refused as unreadable (502): never a 500 from the response schema, and never a
 * 404 for the caller's own record.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer, buildTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { backendWith, FakeCall } from './fake-call.js';
import * as answers from './fixtures/answers.js';

t.test('FOSSBilling ids with leading zeros, or 0', async (t) => {
  let invoiceId: string = '007';
  let orderId: string = '0042';
  let productId: string = '01';
  let gw: TestGateway;
  t.before(async () => {
    const fake = new FakeCall()
      .answer('client/get', answers.client)
      .answer('product/get_list', () => answers.page([{ ...answers.hostingProduct, id: productId }]))
      .answer('order/get_list', () => answers.page([{ ...answers.orderRow, id: orderId }]))
      .answer('invoice/get_list', () => answers.page([{ ...answers.invoice, id: invoiceId }]))
      .answer('invoice/get', () => ({ ...answers.invoice, id: invoiceId }));
    gw = await buildTestGateway({ backend: backendWith(fake) });
  });
  t.teardown(() => gw.close());

  const get = (url: string) => gw.app.inject({ method: 'GET', url, headers: bearer(gw.keys['acme:all']) });

  t.test('leading zeros: the id without them, in lists and for the record itself', async () => {
    const invoices = await get('/v1/billing/invoices');
    assert.equal(invoices.statusCode, 200, invoices.body);
    assert.equal(invoices.json().data[0].id, '7');
    const pdf = await get('/v1/billing/invoices/7/pdf');
    assert.equal(pdf.statusCode, 200, pdf.body);
    const services = await get('/v1/services');
    assert.equal(services.statusCode, 200, services.body);
    assert.equal(services.json().data[0].id, '42');
    const products = await get('/v1/products');
    assert.equal(products.statusCode, 200, products.body);
    assert.equal(products.json().data[0].id, '1');
  });

  t.test('a record whose id is 0: 502 upstream_error, not 500', async () => {
    [invoiceId, orderId, productId] = ['0', '000', '0'];
    for (const url of ['/v1/billing/invoices', '/v1/services', '/v1/products']) {
      const response = await get(url);
      assert.equal(response.statusCode, 502, `${url}: ${response.body}`);
      assert.equal(response.json().reason, 'upstream_error');
    }
  });
});
