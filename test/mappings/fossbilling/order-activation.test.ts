/**
 * `order/create` activates an order only when asked (`activate`, Order/Service.php createOrder);
 * FOSSBilling's own checkout asks for it by the product's `setup` (Cart/Service.php createFromCart,
 * 0.6.22 to 56a0871): `after_order` at once, `after_payment` at once when the order costs nothing,
 * else when its invoice is paid; `manual` never. The gateway sent only the operator's global
 * `activateOrders` (false by default), so an `after_order` product waited for a payment, and a free
 * order on 0.6.x or 0.7.x (no invoice for a price of 0: `issue-invoice && price > 0`, so no payment
 * either) stayed pending forever.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { backendWith, CUSTOMER, FakeCall, keyed } from './fake-call.js';
import * as answers from './fixtures/answers.js';

const custom = { ...answers.onceProduct, id: 11, type: 'custom' };
const products = [
  { ...custom, id: 11, setup: 'after_order' },
  { ...custom, id: 12, setup: 'after_payment', pricing: { type: 'free', free: { price: 0, setup: 0 }, once: { price: '0.00', setup: '0.00' }, recurrent: [] } },
  { ...custom, id: 13, setup: 'after_payment' },
  { ...custom, id: 14, setup: 'manual', pricing: { type: 'free', free: { price: 0, setup: 0 }, once: { price: '0.00', setup: '0.00' }, recurrent: [] } },
  { ...custom, id: 15, setup: 'after_payment', pricing: { type: 'once', free: { price: 0, setup: 0 }, once: { price: '0.00', setup: '5.00' }, recurrent: [] } },
];

async function activateSent(productId: string, cycle: 'onetime' | 'free', overrides: Record<string, unknown> = {}): Promise<unknown> {
  const fake = new FakeCall()
    .answer('client/get', answers.client)
    .answer('product/get_list', answers.page(products))
    .answer('order/create', 7)
    .answer('order/get', answers.order)
    .answer('invoice/get_list', answers.page([answers.invoice]));
  await backendWith(fake, overrides).placeOrder(CUSTOMER, { product_id: productId, billing_cycle: cycle }, keyed(`key-${productId}`));
  return fake.calls.find((entry) => entry.method === 'order/create')?.params.activate;
}

t.test('a product set up after the order is activated by order/create', async () => {
  assert.equal(await activateSent('11', 'onetime'), true);
});

t.test('a free order of a product set up after payment is activated by order/create', async () => {
  assert.equal(await activateSent('12', 'free'), true);
});

t.test('a paid order waits for its payment; a manual product for staff; a setup fee is a price', async () => {
  assert.equal(await activateSent('13', 'onetime'), false);
  assert.equal(await activateSent('14', 'free'), false);
  assert.equal(await activateSent('15', 'onetime'), false);
});

t.test('activateOrders still activates every order', async () => {
  assert.equal(await activateSent('13', 'onetime', { activateOrders: true }), true);
});
