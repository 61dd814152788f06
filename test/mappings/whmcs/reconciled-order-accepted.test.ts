/**
 * WHMCS with acceptOrder.enabled: an order is placed with AddOrder, then accepted (and set up) with
 * AcceptOrder. When AddOrder's answer is lost, the retry with the same key finds the order by its
 * key, but AcceptOrder was never sent for it: the order stayed Pending (never provisioned) while
 * the client got its 201 as if placed normally.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createMemoryStores } from '../../../src/stores/memory/index.js';
import { bearer, buildTestGateway } from '../../helpers/gateway.js';

t.test('WHMCS: an order found again after a lost AddOrder answer is accepted as a placed one is', async (t) => {
  let now = Date.UTC(2026, 10, 22, 9, 0, 0);
  const gw = await buildTestGateway({
    stores: createMemoryStores({ now: () => now }),
    whmcs: { actionTimeoutsMs: { AddOrder: 400 }, acceptOrder: { enabled: true } },
    config: { idempotency: { leaseMarginMs: 100 } },
  });
  t.teardown(() => gw.close());
  const order = () =>
    gw.app.inject({
      method: 'POST',
      url: '/v1/orders',
      headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json', 'idempotency-key': 'accept-1' },
      payload: JSON.stringify({ product_id: '2', billing_cycle: 'monthly' }),
    });
  const sent = (action: string) => gw.simulator.calls.filter((call) => call.action === action).length;

  gw.simulator.inject({ action: 'AddOrder', kind: 'stall_after_effect', ms: 1_000, times: 1 });
  assert.equal((await order()).statusCode, 504);
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  now += 10 * 60_000;
  const retry = await order();
  assert.equal(retry.statusCode, 201, retry.body);
  const placed = gw.simulator.state.orders.at(-1);
  assert.equal(retry.json().id, String(placed?.id));
  assert.equal(sent('addorder'), 1, 'not placed again');
  assert.equal(sent('acceptorder'), 1, 'accepted, as acceptOrder.enabled asks');
  assert.equal(placed?.status, 'Active');
  assert.equal(retry.json().status, 'active');

  // Accepting is not repeated: the replay is the stored answer.
  const replay = await order();
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.equal(sent('acceptorder'), 1);
});
