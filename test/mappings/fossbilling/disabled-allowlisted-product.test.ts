/**
 * FOSSBilling's product `status` (`enabled` | `disabled`) says whether it is sold at all: its guest
 * catalog and product/get force `status: 'enabled'` (src/modules/Product/Api/Guest.php@56a0871), while
 * `hidden` only keeps an enabled product off the listings (it stays orderable by link). admin
 * order/create checks neither (Order/Service.php createOrder), so the gateway's catalog is the only
 * gate. With a `publicProductIds` allow-list, a product the operator retired (disabled) in
 * FOSSBilling must not stay listed and orderable through v1.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { backendWith, CTX, CUSTOMER, FakeCall, keyed, rejectsWith } from './fake-call.js';
import * as answers from './fixtures/answers.js';

const catalog = answers.page([answers.hostingProduct, answers.hiddenProduct, answers.disabledProduct]);
const reads = () => new FakeCall().answer('client/get', answers.client).answer('product/get_list', catalog);

t.test('an allow-listed product disabled in FOSSBilling', async (t) => {
  t.test('is not listed; hidden allow-listed ones still are', async () => {
    const products = await backendWith(reads(), { publicProductIds: ['1', '3', '5'] }).listProducts(CTX);
    assert.deepEqual(products.map((product) => product.id), ['1', '3']);
  });

  t.test('is not found', async () => {
    await rejectsWith(backendWith(reads(), { publicProductIds: ['5'] }).getProduct('5', CTX), 'not_found');
  });

  t.test('cannot be ordered (nothing is written)', async () => {
    const fake = reads();
    const backend = backendWith(fake, { publicProductIds: ['5'] });
    await rejectsWith(backend.placeOrder(CUSTOMER, { product_id: '5', billing_cycle: 'monthly' }, keyed('key-1')), 'validation');
    assert.equal(fake.methods().includes('order/create'), false);
  });
});
