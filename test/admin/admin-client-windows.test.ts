/**
 * The admin sweep's answers that need a gateway of their own (test/admin/admin-client.test.ts):
 * 429 from an admin token's rate limit (`admin.perMinute`), and 410 `replay_stale` for an
 * Idempotency-Key older than the replay window, each checked against the served admin document.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { DocumentClient, sender, type Json } from '../helpers/openapi-client.js';
import { buildAdminGateway } from './helpers.js';

const DOCUMENT = '/admin/v1/openapi.json';

t.test('an operator client from the served admin document: 429 rate_limited', async (t) => {
  const gw = await buildAdminGateway({ admin: { perMinute: 1 } });
  t.teardown(() => gw.close());
  const send = sender(gw.ops);
  const key = gw.tokens.all?.token;
  const client = new DocumentClient(JSON.parse((await send('GET', DOCUMENT, { key })).body) as Json, 'AdminProblem');
  for (const [method, url] of [['GET', '/admin/v1/accounts'], ['GET', DOCUMENT], ['POST', '/admin/v1/accounts/acme/disable']] as const) {
    const limited = await send(method, url, { key });
    assert.equal(limited.status, 429, limited.body);
    client.check(method, url, limited, `${method} ${url} rate limited`);
  }
  assert.deepEqual(client.mismatches, [], client.mismatches.join('\n'));
});

t.test('an operator client from the served admin document: 410 replay_stale (profile A)', async (t) => {
  let now = Date.now();
  const gw = await buildAdminGateway({ stores: createMemoryStores({ now: () => now }) });
  t.teardown(() => gw.close());
  const send = sender(gw.ops);
  const key = gw.tokens.all?.token;
  const client = new DocumentClient(JSON.parse((await send('GET', DOCUMENT, { key })).body) as Json, 'AdminProblem');
  const body = { name: 'panel', scopes: [] };
  const first = await send('POST', '/admin/v1/accounts/acme/keys', { key, body, headers: { 'idempotency-key': 'stale-1' } });
  client.check('POST', '/admin/v1/accounts/acme/keys', first);
  now += 2 * 3_600_000;
  const stale = await send('POST', '/admin/v1/accounts/acme/keys', { key, body, headers: { 'idempotency-key': 'stale-1' } });
  assert.equal(stale.status, 410, stale.body);
  client.check('POST', '/admin/v1/accounts/acme/keys', stale, 'replay after two hours');
  assert.deepEqual(client.mismatches, [], client.mismatches.join('\n'));
});
