/**
 * Admin Idempotency-Keys are scoped to the admin token that sent them, as v1 keys are to their
 * account: two operators' tools that happen to pick the same key (a counter, a date) must not get
 * each other's stored answer. Replayed to another token, POST .../keys would hand it the full API
 * key (the secret) that the first token was issued, and issue nothing for the second.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildAdminGateway } from '../admin/helpers.js';

t.test('the same admin Idempotency-Key from two tokens issues two keys', async (t) => {
  const gw = await buildAdminGateway();
  t.teardown(() => gw.close());
  const issue = (token: string) =>
    gw.admin('POST', '/admin/v1/accounts/acme/keys', { token, body: { name: 'panel-key', scopes: ['read:services'] }, headers: { 'idempotency-key': 'nightly-1' } });

  const first = await issue('all');
  assert.equal(first.statusCode, 201, first.body);
  const second = await issue('admin:keys');
  assert.equal(second.statusCode, 201, second.body);
  assert.equal(second.headers['idempotent-replayed'], undefined, "not a replay of the other token's call");
  assert.notEqual(second.json().id, first.json().id);
  assert.notEqual(second.json().key, first.json().key, "the other token's secret is not handed out");

  // Each token still replays its own call.
  const again = await issue('admin:keys');
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.equal(again.json().id, second.json().id);
});
