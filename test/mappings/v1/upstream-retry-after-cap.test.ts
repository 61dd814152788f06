/**
 * The v1 passthrough passes an upstream's Retry-After on under the same cap as the mapped backends
 * (src/upstream/answers.ts): a proxy asking for a day does not stop integrators for a day.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, type PassthroughGateway, problem } from './harness.js';

t.test('v1 passthrough: a long Retry-After is capped', async (t) => {
  let gw: PassthroughGateway;
  t.before(async () => {
    gw = await buildPassthroughGateway();
  });
  t.teardown(() => gw.close());
  const getService = () => gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:all']) });

  t.test('its rate limit with Retry-After: 86400 → 503 with Retry-After: 300', async () => {
    gw.upstream.answer(problem(429, 'rate_limited', { violated_policies: ['key_minute'] }, { 'retry-after': '86400' }));
    const limited = await getService();
    assert.equal(limited.statusCode, 503);
    assert.equal(limited.headers['retry-after'], '300');
  });

  t.test('a proxy page 503 with Retry-After: 3600 → Retry-After: 300', async () => {
    gw.upstream.answer((_request, response) => {
      response.writeHead(503, { 'content-type': 'text/html', 'retry-after': '3600' });
      response.end('<html>Maintenance</html>');
    });
    const unavailable = await getService();
    assert.equal(unavailable.statusCode, 503);
    assert.equal(unavailable.headers['retry-after'], '300');
  });
});
