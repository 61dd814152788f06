/**
 * GET /problems/<reason> content negotiation at its edges (src/http/problem-pages.ts): a tie is the
 * HTML page; the most specific range decides a type's quality (RFC 9110 §12.5.1), whatever the order.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildTestGateway } from '../helpers/gateway.js';

t.test('negotiation', async (t) => {
  const gw = await buildTestGateway();
  t.teardown(() => gw.close());
  const typeFor = async (accept: string) =>
    (await gw.app.inject({ method: 'GET', url: '/problems/not_found', headers: { accept } })).headers['content-type'];
  assert.match(String(await typeFor('application/json, text/html')), /^text\/html/, 'a tie is the page');
  assert.match(String(await typeFor('text/html;q=0.5, application/json;q=0.5')), /^text\/html/, 'a tie is the page');
  // text/html's own range (0.2) counts, not text/*'s (1), listed first: JSON (0.5) ranks above.
  assert.match(String(await typeFor('text/*;q=1, text/html;q=0.2, application/json;q=0.5')), /^application\/json/);
});
