/**
 * A write the v1 upstream refuses at its door (this gateway's key for the account refused, or what
 * was forwarded) did not run there: the client's retry with the same Idempotency-Key is sent again
 * once the operator fixed it. It was held as an unknown outcome: 409 "still being processed" for
 * the settle time (about 95 s), then another round trip, for a write that never ran.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, ORDER, problem, type PassthroughGateway } from './harness.js';

t.test('v1 passthrough: a write refused at the upstream\'s door leaves its Idempotency-Key free', async (t) => {
  let gw: PassthroughGateway;
  t.beforeEach(async () => {
    gw = await buildPassthroughGateway();
  });
  t.afterEach(() => gw.close());
  const order = (key: string) =>
    gw.app.inject({ method: 'POST', url: '/v1/orders', headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': key }, payload: { product_id: '1', billing_cycle: 'monthly' } });

  for (const [what, refusal] of [
    ['a 401 problem (the account\'s upstream key revoked there)', problem(401, 'unauthenticated')],
    ['a 403 problem (the key lacks the scope there)', problem(403, 'insufficient_scope')],
    // A bare 401/403 page is not the upstream's word: test/review/v1-bare-refusal-not-proof.test.ts.
  ] as const) {
    t.test(what, async () => {
      gw.upstream.answer(refusal);
      const refused = await order('fixed-later');
      assert.equal(refused.statusCode, 502, refused.body);
      gw.upstream.answer(json(201, ORDER));
      const retried = await order('fixed-later');
      assert.equal(retried.statusCode, 201, retried.body);
      assert.equal(gw.upstream.received.filter((request) => request.method === 'POST').length, 2, 'sent again');
    });
  }
});
