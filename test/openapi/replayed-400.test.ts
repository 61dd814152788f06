/**
 * Through a v1 upstream, the sent write's own 400 is stored and replayed with Idempotent-Replayed
 * (src/http/idempotency.ts isUpstreamRefusal; test/mappings/v1/refusal-replayed.test.ts): the
 * document must declare the header on the idempotent operations' 400.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer } from '../helpers/gateway.js';
import { buildPassthroughGateway, json, problem, ORDER } from '../mappings/v1/harness.js';

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>> };

t.test('v1 passthrough: a replayed upstream 400 carries Idempotent-Replayed, as documented', async (t) => {
  const gw = await buildPassthroughGateway();
  t.teardown(() => gw.close());
  const order = () =>
    gw.app.inject({
      method: 'POST',
      url: '/v1/orders',
      headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': 'refused-400' },
      payload: { product_id: '1', billing_cycle: 'monthly' },
    });
  gw.upstream.answer(problem(400, 'invalid_request'));
  const first = await order();
  assert.equal(first.statusCode, 400, first.body);
  gw.upstream.answer(json(201, ORDER));
  const again = await order();
  assert.equal(again.statusCode, 400, again.body);
  assert.equal(again.headers['idempotent-replayed'], 'true');

  const doc = (await gw.app.inject({ url: '/v1/openapi.json' })).json() as Doc;
  for (const [path, method] of [['/v1/orders', 'post'], ['/v1/services/{id}/actions', 'post']] as const) {
    assert.ok(doc.paths[path]?.[method]?.responses['400']?.headers?.['Idempotent-Replayed'], `${method} ${path} 400 declares Idempotent-Replayed`);
  }
});
