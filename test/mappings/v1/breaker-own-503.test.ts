/**
 * A 503 problem the upstream wrote about one request or one feature is an answer, not a sign that it
 * is down: `outcome_unknown` (its idempotency record of one account's earlier write) and
 * `backend_misconfigured` (its doctor holding orders). Counted as down-signals, one account retrying
 * a stuck write, or orders held upstream, open this gateway's breaker and every account's reads
 * answer 503 while the upstream serves them.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, problem, SERVICE, type PassthroughGateway } from './harness.js';

t.test("v1 passthrough: the upstream's own 503 problems about one request do not open the breaker", async (t) => {
  let gw: PassthroughGateway;
  t.beforeEach(async () => {
    gw = await buildPassthroughGateway({ v1: { circuitBreaker: { failureThreshold: 2, openMs: 60_000 } } });
  });
  t.afterEach(() => gw.close());

  const read = () => gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['beta:all']) });
  const write = (url: string, key: string, payload: object) =>
    gw.app.inject({ method: 'POST', url, headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': key }, payload });

  t.test('outcome_unknown: one account retrying writes whose outcome the upstream cannot prove', async () => {
    gw.upstream.answer(problem(503, 'outcome_unknown', {}, { 'retry-after': '90' }));
    for (const key of ['stuck-1', 'stuck-2', 'stuck-3']) {
      const response = await write('/v1/services/7/actions', key, { action: 'reboot' });
      assert.equal(response.statusCode, 503, response.body);
      assert.equal(response.json().reason, 'outcome_unknown');
    }
    gw.upstream.answer(json(200, SERVICE));
    const sent = gw.upstream.received.length;
    assert.equal((await read()).statusCode, 200, 'another account still reads');
    assert.equal(gw.upstream.received.length, sent + 1);
  });

  t.test('backend_misconfigured: the upstream holds orders, and serves everything else', async () => {
    gw.upstream.answer(problem(503, 'backend_misconfigured', {}, { 'retry-after': '30' }));
    for (const key of ['held-1', 'held-2', 'held-3']) {
      const response = await write('/v1/orders', key, { product_id: '1', billing_cycle: 'monthly' });
      assert.equal(response.statusCode, 503, response.body);
      assert.equal(response.json().reason, 'backend_misconfigured');
    }
    gw.upstream.answer(json(200, SERVICE));
    assert.equal((await read()).statusCode, 200, 'reads still go through');
  });

  t.test('a plain 503 and its own upstream_unavailable still open it', async () => {
    gw.upstream.answer(problem(503, 'upstream_unavailable'));
    assert.deepEqual([(await read()).statusCode, (await read()).statusCode], [503, 503]);
    const sent = gw.upstream.received.length;
    gw.upstream.answer(json(200, SERVICE));
    assert.equal((await read()).statusCode, 503, 'open');
    assert.equal(gw.upstream.received.length, sent, 'nothing sent');
  });
});
