/**
 * An order must not be checked against stock the catalog cache still shows.
 *
 * WHMCS's AddOrder decrements tblproducts.qty and does not refuse a product with none left
 * (test/mappings/whmcs/order-stock.test.ts), so the mapping's stock check (orders.ts checkStock) is
 * the only guard. It reads the catalog as `fresh`, which a cached answer within its TTL satisfies
 * (answer-cache.ts fresh): the GetProducts answer read before the first order, still showing the
 * unit it took, let a second order within productCacheTtlMs (60 s by default) through, and WHMCS
 * oversold the product. A product under stock control is now read again uncached before ordering.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { CUSTOMER, FakeWhmcs, rejectsWith } from './fake-whmcs.js';
import * as answers from './fixtures/answers.js';

t.test('WHMCS: the next stock check sees the stock an order took', async (t) => {
  let stocklevel = 1;
  const whmcs = new FakeWhmcs()
    // Read at each request: what WHMCS would answer now.
    .answer('GetProducts', () => ({ ...answers.catalog, products: { product: [answers.vpsS, { ...answers.vpsM, stockcontrol: 'true', stocklevel }] } }))
    .answer('GetClientsDetails', answers.clientDetails)
    .answer('AddOrder', () => {
      stocklevel -= 1;
      return answers.addOrder;
    })
    .answer('GetOrders', answers.orders);
  t.teardown(() => whmcs.close());
  const backend = whmcs.backend();
  const order = { product_id: '2', billing_cycle: 'annually' } as const;
  const ctx = (key: string) => ({ requestId: `req-${key}`, idempotencyKey: key, idempotencyRecord: `rec-${key}`, beforeWrite: async () => undefined });

  assert.equal((await backend.placeOrder(CUSTOMER, order, ctx('k1'))).id, '1');
  assert.equal(stocklevel, 0, 'the first order took the last unit');

  const error = await rejectsWith(backend.placeOrder(CUSTOMER, order, ctx('k2')), 'validation');
  assert.match(error.detail, /out of stock/);
  assert.equal(whmcs.requests('AddOrder').length, 1, 'the second order was never sent');
});

t.test("WHMCS: a stock-controlled product is read again before ordering: another worker's order is seen", async (t) => {
  let stocklevel = 1;
  const whmcs = new FakeWhmcs()
    .answer('GetProducts', () => ({ ...answers.catalog, products: { product: [answers.vpsS, { ...answers.vpsM, stockcontrol: 'true', stocklevel }] } }))
    .answer('GetClientsDetails', answers.clientDetails)
    .answer('AddOrder', answers.addOrder)
    .answer('GetOrders', answers.orders);
  t.teardown(() => whmcs.close());
  const backend = whmcs.backend();
  // This process caches the catalog with one unit left; another process's order then takes it.
  assert.equal((await backend.listProducts({ requestId: 'req-list' })).length, 2);
  stocklevel = 0;
  const ctx = { requestId: 'req-x', idempotencyKey: 'x', idempotencyRecord: 'rec-x', beforeWrite: async () => undefined };
  const error = await rejectsWith(backend.placeOrder(CUSTOMER, { product_id: '2', billing_cycle: 'annually' }, ctx), 'validation');
  assert.match(error.detail, /out of stock/);
  assert.equal(whmcs.requests('AddOrder').length, 0, 'nothing was sent');
});
