/**
 * The v1 passthrough under the request's deadline: a forward gets what is left of it, not its own
 * (longer) timeout, so the client has its 504 by the deadline rather than the upstream's late answer.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, ORDER } from './harness.js';

t.test('v1 passthrough: a write forwarded under the request deadline ends with it', async (t) => {
  // The write's own timeout (5 s) is far beyond the request's (2 s); the upstream answers after 3.5 s.
  const gw = await buildPassthroughGateway({ config: { requestDeadlineMs: 2_000 }, v1: { writeTimeoutMs: 5_000, circuitBreaker: { enabled: false } } });
  t.teardown(() => gw.close());
  gw.upstream.answer((request, response, socket) => void setTimeout(() => json(201, ORDER)(request, response, socket), 2_500));

  const response = await gw.app.inject({
    method: 'POST',
    url: '/v1/orders',
    headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json', 'idempotency-key': 'deadline-forward-1' },
    payload: { product_id: '1', billing_cycle: 'monthly' },
  });
  assert.equal(response.statusCode, 504, response.body);
  assert.equal(response.json().reason, 'upstream_timeout');
});
