/**
 * The v1 passthrough's breaker under the request's deadline: a forward cut by the request's own
 * deadline (shorter than the forward's timeout) says nothing of the upstream. Before, each such cut
 * counted as a down-signal: a few clients with short deadlines opened the breaker for every account.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json } from './harness.js';

t.test('v1 passthrough: forwards cut by the request deadline do not open the breaker', async (t) => {
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
  assert.equal(balance.statusCode, 200, `the breaker opened on the request's own deadlines: ${balance.body}`);
});
