/**
 * A write the v1 upstream refused at its door leaves its Idempotency-Key free, so the client's retry
 * runs once the operator fixed it (not 409 "still being processed" for the settle time). That holds for the upstream's own refusals (a Problem+JSON of the closed table: 401
 * unauthenticated, 403 insufficient_scope, the forwarding faults), which the v1 contract answers
 * before anything runs. A bare 401/403 (an HTML or JSON page that is not the upstream's problem) is
 * written by whatever sits in front of it: a WAF that blocks the *answer* (response-body inspection)
 * answers 403 after the write ran. That is no proof the write did not run, and the gateway's rule is
 * "a write is sent again only with proof that the first one did not happen" (README). Freed, the
 * key's record is deleted, the retry gets a new idempotency record and so a new upstream
 * Idempotency-Key, and the upstream places the order a second time.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, ORDER, problem, type PassthroughGateway, type Script } from './harness.js';

const html = (status: number): Script => (_request, response) => {
  const text = '<html><body>Request blocked</body></html>';
  response.writeHead(status, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(text) });
  response.end(text);
};

t.test('v1 passthrough: which refusals free the Idempotency-Key', async (t) => {
  let gw: PassthroughGateway;
  t.beforeEach(async () => {
    gw = await buildPassthroughGateway();
  });
  t.afterEach(() => gw.close());
  const order = (key: string) =>
    gw.app.inject({ method: 'POST', url: '/v1/orders', headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': key }, payload: { product_id: '1', billing_cycle: 'monthly' } });
  const posts = () => gw.upstream.received.filter((request) => request.method === 'POST');

  for (const [what, refusal] of [
    ['a bare 403 page (a WAF that blocked the answer)', html(403)],
    ['a bare 401 JSON that is not a problem', json(401, { message: 'no' })],
  ] as const) {
    t.test(`${what}: no proof; the retry never sends the write under a new upstream key`, async () => {
      gw.upstream.answer(refusal);
      const first = await order('maybe-ran');
      assert.equal(first.statusCode, 502, first.body);
      gw.upstream.answer(json(201, ORDER));
      const retried = await order('maybe-ran');
      const sent = posts();
      if (sent.length === 2) {
        assert.equal(sent[1]?.headers['idempotency-key'], sent[0]?.headers['idempotency-key'], `sent again under another upstream key (retry answered ${retried.statusCode})`);
      } else {
        assert.equal(sent.length, 1);
        assert.equal(retried.statusCode, 409, retried.body);
        assert.equal(retried.json().reason, 'idempotency_in_progress');
      }
    });
  }

  for (const [what, refusal] of [
    ["the upstream's own 401 problem", problem(401, 'unauthenticated')],
    ["the upstream's own 403 problem", problem(403, 'insufficient_scope')],
    ['a forwarding fault the upstream answered (415 problem)', problem(415, 'unsupported_media_type')],
    ['a forwarding fault the upstream answered (413 problem)', problem(413, 'payload_too_large')],
  ] as const) {
    t.test(`${what}: nothing ran, the key is free at once`, async () => {
      gw.upstream.answer(refusal);
      const first = await order('did-not-run');
      assert.equal(first.statusCode, 502, first.body);
      gw.upstream.answer(json(201, ORDER));
      const retried = await order('did-not-run');
      assert.equal(retried.statusCode, 201, retried.body);
      assert.equal(posts().length, 2, 'sent again');
    });
  }
});
