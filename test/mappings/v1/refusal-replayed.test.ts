/**
 * Contract §5 / README: the sent write's own refusal (a 4xx the backend decided, nothing done) is
 * stored and replayed. Through a v1 upstream that refusal is its 400 or 422 Problem; it was neither
 * stored nor released: the same request got 409 idempotency_in_progress and was sent again.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, problem, ORDER } from './harness.js';

t.test('v1 passthrough: an upstream 422 to the sent order is stored and replayed', async () => {
  const gw = await buildPassthroughGateway();
  try {
    const order = (billingCycle: string) =>
      gw.app.inject({
        method: 'POST',
        url: '/v1/orders',
        headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': 'refused-1' },
        payload: { product_id: '1', billing_cycle: billingCycle },
      });
    gw.upstream.answer(problem(422, 'validation_failed', { errors: [{ pointer: '/billing_cycle', detail: 'not offered' }] }));
    const first = await order('monthly');
    assert.equal(first.statusCode, 422);

    gw.upstream.answer(json(201, ORDER));
    const again = await order('monthly');
    assert.equal(again.statusCode, 422, `replayed, not ${again.json().reason}`);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, first.body);
    assert.equal((await order('annually')).json().reason, 'idempotency_conflict', 'another body: a new key');
    assert.equal(gw.upstream.received.length, 1, 'sent once');
  } finally {
    await gw.close();
  }
});

t.test('v1 passthrough: an upstream invalid_action to the sent action is stored and replayed', async () => {
  const gw = await buildPassthroughGateway();
  try {
    const reboot = () =>
      gw.app.inject({
        method: 'POST',
        url: '/v1/services/7/actions',
        headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': 'refused-2' },
        payload: { action: 'reboot' },
      });
    gw.upstream.answer(problem(422, 'invalid_action', { allowed_actions: ['start', 'stop'] }));
    const first = await reboot();
    assert.equal(first.statusCode, 422);
    const again = await reboot();
    assert.equal(again.statusCode, 422, `replayed, not ${again.json().reason}`);
    assert.deepEqual(again.json().allowed_actions, ['start', 'stop']);
    assert.equal(gw.upstream.received.length, 1, 'sent once');
  } finally {
    await gw.close();
  }
});
