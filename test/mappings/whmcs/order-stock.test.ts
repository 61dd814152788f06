/**
 * A product whose stock is out must be refused before AddOrder.
 *
 * GetProducts lists `stockcontrol: "true"` and `stocklevel` when stock control is on (WHMCS 8.7.2
 * includes/api/getproducts.php). AddOrder does not refuse such a product: calcCartTotals
 * (orderfunctions.php) only drops it from the session cart `if (!defined("ADMINAREA"))` and goes
 * on to insert the tblhosting row and decrement tblproducts.qty below zero, so the API oversells a
 * product the order form would refuse. The FOSSBilling mapping answers 422 for the same case.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { CUSTOMER, FakeWhmcs, rejectsWith } from './fake-whmcs.js';
import * as answers from './fixtures/answers.js';

const CTX = { requestId: 'req-review', idempotencyKey: 'key-1', idempotencyRecord: 'rec-1', beforeWrite: async () => undefined };

function whmcsWithStock(stock: Record<string, unknown>): FakeWhmcs {
  return new FakeWhmcs()
    .answer('GetProducts', { ...answers.catalog, products: { product: [answers.vpsS, { ...answers.vpsM, ...stock }] } })
    .answer('GetClientsDetails', answers.clientDetails)
    .answer('AddOrder', answers.addOrder)
    .answer('GetOrders', answers.orders);
}

t.test('stock control', async (t) => {
  for (const stocklevel of [0, '0', -2]) {
    t.test(`stocklevel ${JSON.stringify(stocklevel)}: 422 on product_id, nothing sent`, async () => {
      const whmcs = whmcsWithStock({ stockcontrol: 'true', stocklevel });
      t.teardown(() => whmcs.close());
      const error = await rejectsWith(whmcs.backend().placeOrder(CUSTOMER, { product_id: '2', billing_cycle: 'annually' }, CTX), 'validation');
      assert.match(error.detail, /^product_id: product 2 is out of stock/);
      assert.equal(whmcs.requests('AddOrder').length, 0);
    });
  }

  t.test('in stock, or without stock control: ordered', async () => {
    for (const stock of [{ stockcontrol: 'true', stocklevel: '3' }, {}]) {
      const whmcs = whmcsWithStock(stock);
      try {
        assert.equal((await whmcs.backend().placeOrder(CUSTOMER, { product_id: '2', billing_cycle: 'annually' }, CTX)).id, '1');
      } finally {
        await whmcs.close();
      }
    }
  });
});
