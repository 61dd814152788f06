/**
 * A write WHMCS refuses at its door for the gateway's credentials (HTTP 403 "Authentication
 * Failed": checked before the action runs) did not run: the error says so (`notRun`), so that its
 * Idempotency-Key is freed (src/http/idempotency.ts, neverRan) instead of being left "outcome
 * unknown", which would make the client's retry with the same key reconcile a write that never was.
 * It is the refusal that starts the credential hold; the calls the hold then refuses are free too.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { CUSTOMER, FakeWhmcs, rejectsWith } from '../mappings/whmcs/fake-whmcs.js';
import * as answers from '../mappings/whmcs/fixtures/answers.js';

t.test('WHMCS: AddOrder refused for the credentials is known not to have run', async (t) => {
  const whmcs = new FakeWhmcs();
  t.teardown(() => whmcs.close());
  whmcs
    .answer('GetProducts', answers.catalog)
    .answer('GetClientsDetails', answers.clientDetails)
    .answer('AddOrder', answers.refusals.auth, { status: 403 })
    .answer('GetOrders', answers.orders);
  let marked = 0;
  const ctx = { requestId: 'req-refused', idempotencyKey: 'key-1', idempotencyRecord: 'rec-1', beforeWrite: async () => void (marked += 1) };
  const order = { product_id: '2', billing_cycle: 'annually' as const, config_options: { '4': '12', '5': 21, '6': true, '8': 3 }, hostname: 'vps7.example.net' };
  const error = await rejectsWith(whmcs.backend().placeOrder(CUSTOMER, order, ctx), 'upstream_error');
  assert.equal(whmcs.requests('AddOrder').length, 1, 'AddOrder was sent (and marked)');
  assert.equal(marked, 1);
  assert.equal(error.outcomeUnknown, false);
  assert.equal(error.notRun, true, 'refused before it ran: the key is free');
});

t.test('WHMCS: a write refused at its door for the IP allow-list or a role is known not to have run', async (t) => {
  for (const [why, refusal] of [['the IP allow-list', answers.refusals.ip], ['a role without the action', answers.refusals.permission]] as const) {
    const whmcs = new FakeWhmcs();
    t.teardown(() => whmcs.close());
    whmcs
      .answer('GetProducts', answers.catalog)
      .answer('GetClientsDetails', answers.clientDetails)
      .answer('AddOrder', refusal, { status: 403 })
      .answer('GetOrders', answers.orders);
    const ctx = { requestId: 'req-refused', idempotencyKey: 'key-1', idempotencyRecord: 'rec-1', beforeWrite: async () => undefined };
    const order = { product_id: '2', billing_cycle: 'annually' as const, config_options: { '4': '12', '5': 21, '6': true, '8': 3 }, hostname: 'vps7.example.net' };
    const error = await rejectsWith(whmcs.backend().placeOrder(CUSTOMER, order, ctx), 'upstream_error');
    assert.equal(whmcs.requests('AddOrder').length, 1, `${why}: AddOrder was sent`);
    assert.equal(error.notRun, true, `${why}: refused before it ran, the key is free`);
  }
});

t.test("WHMCS: a proxy's 403 page (not WHMCS's answer) leaves a write's outcome unknown", async (t) => {
  const whmcs = new FakeWhmcs();
  t.teardown(() => whmcs.close());
  whmcs
    .answer('GetProducts', answers.catalog)
    .answer('GetClientsDetails', answers.clientDetails)
    .answer('AddOrder', '<html><body>403 Forbidden</body></html>', { status: 403 })
    .answer('GetOrders', answers.orders);
  const ctx = { requestId: 'req-refused', idempotencyKey: 'key-1', idempotencyRecord: 'rec-1', beforeWrite: async () => undefined };
  const order = { product_id: '2', billing_cycle: 'annually' as const, config_options: { '4': '12', '5': 21, '6': true, '8': 3 }, hostname: 'vps7.example.net' };
  const error = await rejectsWith(whmcs.backend().placeOrder(CUSTOMER, order, ctx), 'upstream_error');
  assert.notEqual(error.notRun, true, 'no proof that it did not run');
});
