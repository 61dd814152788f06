/**
 * The v1 passthrough's breaker under the request's deadline, by the mapped backends' rule
 * (request-deadline.ts, SLOW_CUT_MS): a forward the request's own deadline cut counts as a timeout
 * only once it had waited 1.5 s for its answer. With `requestDeadlineMs` below the forwards' own
 * timeout, an upstream that hangs must still open the breaker (before, no cut ever counted, and
 * every request waited its whole deadline); a forward sent late in its request (it waited for a
 * connection) and cut soon after says nothing of the upstream.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, SERVICE } from './harness.js';

t.test('v1 passthrough: forwards the request deadline cut after a long wait open the breaker', async (t) => {
  // The read's own timeout (5 s) is far beyond the request's (2 s); the upstream answers the service after 3 s.
  const gw = await buildPassthroughGateway({
    config: { requestDeadlineMs: 2_000 },
    v1: { timeoutMs: 5_000, circuitBreaker: { enabled: true, failureThreshold: 2, openMs: 60_000 } },
  });
  t.teardown(() => gw.close());
  gw.upstream.answer((request, response, socket) => {
    if (request.url.endsWith('/v1/billing/balance')) json(200, { credit: { amount: '0.00', currency: 'USD' } })(request, response, socket);
    else setTimeout(() => json(200, {})(request, response, socket), 3_000);
  });
  const read = (url: string) => gw.app.inject({ method: 'GET', url, headers: bearer(gw.keys['acme:all']) });

  const cut = await Promise.all([read('/v1/services/7'), read('/v1/services/7')]);
  assert.deepEqual(cut.map((response) => response.statusCode), [504, 504]);
  const balance = await read('/v1/billing/balance');
  assert.equal(balance.statusCode, 503, `two forwards that hung for the whole deadline did not open the breaker: ${balance.body}`);
  assert.equal(balance.json().reason, 'upstream_unavailable');
});

t.test('v1 passthrough: a forward sent late in its request and cut soon after does not count', async (t) => {
  // One connection: the first read holds it 0.8 s, so the second is sent with 1.2 s of its request
  // left and cut after waiting 1.2 s. Threshold 1: were that cut counted, the breaker would open.
  const gw = await buildPassthroughGateway({
    config: { requestDeadlineMs: 2_000 },
    v1: { connections: 1, timeoutMs: 5_000, circuitBreaker: { enabled: true, failureThreshold: 1, openMs: 60_000 } },
  });
  t.teardown(() => gw.close());
  gw.upstream.answer((request, response, socket) => {
    if (request.url.endsWith('/v1/billing/balance')) json(200, { credit: { amount: '0.00', currency: 'USD' } })(request, response, socket);
    else setTimeout(() => json(200, SERVICE)(request, response, socket), request.url.endsWith('/v1/services/7') ? 800 : 3_000);
  });
  const read = (url: string) => gw.app.inject({ method: 'GET', url, headers: bearer(gw.keys['acme:all']) });

  const [first, late] = await Promise.all([read('/v1/services/7'), read('/v1/services/8')]);
  assert.equal(first.statusCode, 200, first.body);
  assert.equal(late.statusCode, 504, late.body);
  const balance = await read('/v1/billing/balance');
  assert.equal(balance.statusCode, 200, `a forward cut 1.2 s after it was sent opened the breaker: ${balance.body}`);
});
