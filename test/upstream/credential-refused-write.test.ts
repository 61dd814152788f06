/**
 * A write WHMCS refuses at its door for the gateway's credentials (HTTP 403 "Authentication
 * Failed": checked before the action runs) did not run: the error says so (`notRun`), so that its
 * Idempotency-Key is freed (src/http/idempotency.ts, neverRan) instead of being left "outcome
 * unknown", which would make the client's retry with the same key reconcile a write that never was.
 * It is the refusal that starts the credential hold; the calls the hold then refuses are free too.
 * WHMCS's other refusals at its door (the IP allow-list, a role) prove the same; a proxy's page does not.
 */
import assert from 'node:assert/strict';
import t, { type Test } from 'tap';
import type { BackendError } from '../../src/backend/backend.js';
import { type Answer, CUSTOMER, FakeWhmcs, rejectsWith } from '../mappings/whmcs/fake-whmcs.js';
import * as answers from '../mappings/whmcs/fixtures/answers.js';

/** AddOrder answered `refusal` with 403: the error it ends with, how often it was sent and write-ahead marked. */
async function refusedOrder(t: Test, refusal: Answer): Promise<{ error: BackendError; sent: number; marked: number }> {
  const whmcs = new FakeWhmcs();
  t.teardown(() => whmcs.close());
  whmcs
    .answer('GetProducts', answers.catalog)
    .answer('GetClientsDetails', answers.clientDetails)
    .answer('AddOrder', refusal, { status: 403 })
    .answer('GetOrders', answers.orders);
  let marked = 0;
  const ctx = { requestId: 'req-refused', idempotencyKey: 'key-1', idempotencyRecord: 'rec-1', beforeWrite: async () => void (marked += 1) };
  const order = { product_id: '2', billing_cycle: 'annually' as const, config_options: { '4': '12', '5': 21, '6': true, '8': 3 }, hostname: 'vps7.example.net' };
  const error = await rejectsWith(whmcs.backend().placeOrder(CUSTOMER, order, ctx), 'upstream_error');
  return { error, sent: whmcs.requests('AddOrder').length, marked };
}

t.test('WHMCS: AddOrder refused for the credentials is known not to have run', async (t) => {
  const { error, sent, marked } = await refusedOrder(t, answers.refusals.auth);
  assert.equal(sent, 1, 'AddOrder was sent (and marked)');
  assert.equal(marked, 1);
  assert.equal(error.outcomeUnknown, false);
  assert.equal(error.notRun, true, 'refused before it ran: the key is free');
});

t.test('WHMCS: a write refused at its door for the IP allow-list or a role is known not to have run', async (t) => {
  for (const [why, refusal] of [['the IP allow-list', answers.refusals.ip], ['a role without the action', answers.refusals.permission]] as const) {
    const { error, sent } = await refusedOrder(t, refusal);
    assert.equal(sent, 1, `${why}: AddOrder was sent`);
    assert.equal(error.notRun, true, `${why}: refused before it ran, the key is free`);
  }
});

t.test("WHMCS: a proxy's 403 page (not WHMCS's answer) leaves a write's outcome unknown", async (t) => {
  const { error } = await refusedOrder(t, '<html><body>403 Forbidden</body></html>');
  assert.notEqual(error.notRun, true, 'no proof that it did not run');
});
