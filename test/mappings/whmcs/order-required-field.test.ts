/**
 * A product with a required custom field the API cannot fill must be refused before AddOrder.
 *
 * GetProducts lists a product's order-form custom fields with `required: "*"` for a required one
 * (WHMCS 8.7.2 customfieldfunctions.php getCustomFields: `if ($required == "on") $required = "*"`).
 * Only the order form checks them (cart.php `$validate->validateCustomFields("product", $pid, true)`);
 * AddOrder stores whatever `customfields[n]` holds, so the gateway, which fills only the order-key
 * field, placed orders with a required field left empty.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { CUSTOMER, FakeWhmcs, rejectsWith } from './fake-whmcs.js';
import * as answers from './fixtures/answers.js';

const CTX = { requestId: 'req-review', idempotencyKey: 'key-1', idempotencyRecord: 'rec-1', beforeWrite: async () => undefined };

function whmcsWithFields(sshKeyRequired: string, keyRequired: string): FakeWhmcs {
  const customfields = {
    customfield: [
      { id: 2, name: 'SSH Key', description: '', required: sshKeyRequired },
      { id: 7, name: 'Gateway Idempotency Key', description: '', required: keyRequired },
    ],
  };
  return new FakeWhmcs()
    .answer('GetProducts', { ...answers.catalog, products: { product: [answers.vpsS, { ...answers.vpsM, customfields }] } })
    .answer('GetClientsDetails', answers.clientDetails)
    .answer('AddOrder', answers.addOrder)
    .answer('GetOrders', answers.orders);
}

t.test('a required custom field other than the order key: 422, nothing sent', async (t) => {
  const whmcs = whmcsWithFields('*', '');
  t.teardown(() => whmcs.close());
  const error = await rejectsWith(whmcs.backend().placeOrder(CUSTOMER, { product_id: '2', billing_cycle: 'annually' }, CTX), 'validation');
  assert.match(error.detail, /^product_id: product 2 .*"SSH Key"/);
  assert.equal(whmcs.requests('AddOrder').length, 0);
});

t.test('only the order key required, or nothing required: ordered', async () => {
  for (const [ssh, key] of [['', '*'], ['', '']] as const) {
    const whmcs = whmcsWithFields(ssh, key);
    try {
      assert.equal((await whmcs.backend().placeOrder(CUSTOMER, { product_id: '2', billing_cycle: 'annually' }, CTX)).id, '1');
    } finally {
      await whmcs.close();
    }
  }
});
