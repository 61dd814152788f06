/**
 * The request's deadline (`requestDeadlineMs`) over an order's sequential upstream calls: reads
 * that use up the request's time leave its AddOrder unsent (504 with Retry-After), and the
 * Idempotency-Key is free again, as nothing was sent. Without it, AddOrder went out however late,
 * after the client had given up. No timing is asserted: the simulator's latency makes the reads
 * alone take most of the deadline.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { startWhmcsSimulator } from '../../simulators/whmcs/server.js';
import { bearer, buildTestGateway } from '../helpers/gateway.js';

t.test('an order whose reads use up the request deadline never sends AddOrder', async (t) => {
  // Every WHMCS call takes 1.2 s; the order's two reads (in parallel) leave less than a second of 2 s.
  const simulator = await startWhmcsSimulator({ latencyMs: 1_200 });
  t.teardown(() => simulator.close());
  const gw = await buildTestGateway({ simulator, config: { doctor: { enabled: false }, requestDeadlineMs: 2_000 } });
  t.teardown(() => gw.close());
  const order = () =>
    gw.app.inject({
      method: 'POST',
      url: '/v1/orders',
      headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json', 'idempotency-key': 'deadline-order-1' },
      payload: { product_id: '1', billing_cycle: 'monthly', config_options: { '1': '11' }, hostname: 'vps7.example.com' },
    });
  const addOrders = () => simulator.calls.filter((call) => call.action === 'AddOrder').length;

  const first = await order();
  assert.equal(first.statusCode, 504, first.body);
  assert.equal(first.json().reason, 'upstream_timeout');
  assert.ok(Number(first.headers['retry-after']) >= 1, 'Retry-After tells when to try again');
  assert.equal(addOrders(), 0, 'AddOrder was never sent');

  // Nothing was sent, so the key is free at once: no 409 in progress, no 503 outcome unknown.
  const again = await order();
  assert.equal(again.statusCode, 504, again.body);
  assert.equal(addOrders(), 0);
});
