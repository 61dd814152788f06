/**
 * README, circuit breaker: a 502 is not a down-signal when the upstream wrote it itself
 * (Problem+JSON, `upstream_error`). Only the media type was checked: a proxy in front that words its
 * 502 as Problem+JSON (no reason of this contract) kept the breaker closed while the upstream
 * behind it was gone, and every request still waited on it.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway } from './harness.js';

t.test("v1 passthrough: a proxy's Problem+JSON 502 is a down-signal", async (t) => {
  const gw = await buildPassthroughGateway({ v1: { circuitBreaker: { failureThreshold: 2, openMs: 10_000 } } });
  t.teardown(() => gw.close());
  gw.upstream.answer((_request, response) => {
    response.writeHead(502, { 'content-type': 'application/problem+json' });
    response.end(JSON.stringify({ type: 'about:blank', title: 'Bad Gateway', status: 502, detail: 'no healthy upstream' }));
  });
  const read = () => gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:all']) });
  assert.deepEqual([(await read()).statusCode, (await read()).statusCode], [502, 502]);
  const sent = gw.upstream.received.length;
  const refused = await read();
  assert.equal(refused.statusCode, 503, refused.body);
  assert.equal(refused.json().reason, 'upstream_unavailable');
  assert.equal(gw.upstream.received.length, sent, 'open: nothing sent');
});
