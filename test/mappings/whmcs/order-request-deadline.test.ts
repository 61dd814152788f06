/**
 * WHMCS orders under the request's deadline (CallContext.deadline): the reads before AddOrder use
 * up the request's time, so AddOrder is not sent, and the failure says it did not run (its
 * Idempotency-Key is free). Before, AddOrder went out with a fresh deadline of its own however late.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { CUSTOMER, FakeWhmcs, rejectsWith } from './fake-whmcs.js';
import * as answers from './fixtures/answers.js';

t.test('WHMCS: AddOrder is not sent when the reads before it used up the request deadline', async (t) => {
  const whmcs = new FakeWhmcs();
  t.teardown(() => whmcs.close());
  // Each read answers after 600 ms (in parallel): less than a second of the 1.2 s deadline is left.
  whmcs
    .answer('GetProducts', answers.catalog, { delayMs: 600 })
    .answer('GetClientsDetails', answers.clientDetails, { delayMs: 600 })
    .answer('AddOrder', answers.addOrder)
    .answer('GetOrders', answers.orders);
  let marked = 0;
  const ctx = {
    requestId: 'req-deadline',
    idempotencyKey: 'key-1',
    idempotencyRecord: 'rec-1',
    beforeWrite: async () => void (marked += 1),
    deadline: Date.now() + 1_200,
  };
  const order = { product_id: '2', billing_cycle: 'annually' as const, config_options: { '4': '12', '5': 21, '6': true, '8': 3 }, hostname: 'vps7.example.net' };
  const error = await rejectsWith(whmcs.backend().placeOrder(CUSTOMER, order, ctx), 'timeout');
  assert.equal(whmcs.requests('AddOrder').length, 0, 'AddOrder was not sent');
  assert.equal(error.notRun, true, 'known not to have run: the key is free');
  assert.equal(error.outcomeUnknown, false);
  assert.ok(marked <= 1);
});
