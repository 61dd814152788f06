/**
 * A product whose `setup` FOSSBilling answers as null (the column is nullable; its default is
 * after_payment) is placed as an after_payment one, as `doctor` reads it too: a free order of it is
 * activated by order/create (no invoice, so no payment, would ever activate it), a priced one waits
 * for its payment.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { backendWith, CUSTOMER, FakeCall, keyed } from './fake-call.js';
import * as answers from './fixtures/answers.js';

const custom = { ...answers.onceProduct, type: 'custom', setup: null };
const products = [
  { ...custom, id: 21, pricing: { type: 'free', free: { price: 0, setup: 0 }, once: { price: '0.00', setup: '0.00' }, recurrent: [] } },
  { ...custom, id: 22 },
];

async function activateSent(productId: string, cycle: 'onetime' | 'free'): Promise<unknown> {
  const fake = new FakeCall()
    .answer('client/get', answers.client)
    .answer('product/get_list', answers.page(products))
    .answer('order/create', 7)
    .answer('order/get', answers.order)
    .answer('invoice/get_list', answers.page([answers.invoice]));
  await backendWith(fake).placeOrder(CUSTOMER, { product_id: productId, billing_cycle: cycle }, keyed(`key-${productId}`));
  return fake.calls.find((entry) => entry.method === 'order/create')?.params.activate;
}

t.test('setup null: a free order is activated, a priced one waits for its payment', async () => {
  assert.equal(await activateSent('21', 'free'), true);
  assert.equal(await activateSent('22', 'onetime'), false);
});
