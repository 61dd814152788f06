/**
 * The v1 passthrough's breaker counts a 504 from in front of the upstream (a proxy or balancer whose
 * upstream did not answer in time) as a down-signal, like a 502 or 503: dropping 504 from its
 * down-statuses passed every breaker and deadline test of the area (hand mutation).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json } from './harness.js';

t.test('v1 passthrough: 504 gateway timeouts in a row open the breaker', async (t) => {
  const gw = await buildPassthroughGateway({ v1: { circuitBreaker: { enabled: true, failureThreshold: 2, openMs: 60_000 } } });
  t.teardown(() => gw.close());
  const read = () => gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:all']) });
  gw.upstream.answer(json(504, { error: 'gateway timeout' }));
  await read();
  await read();
  const sent = gw.upstream.received.length;
  const refused = await read();
  assert.equal(refused.json().reason, 'upstream_unavailable', refused.body);
  assert.equal(gw.upstream.received.length, sent, 'the open breaker sent nothing');
});
