/**
 * POST /admin/v1/accounts/{id}/keys refuses, with 409 key_inactive, a retry whose earlier attempt
 * made a key that was revoked since (src/admin/service.ts issueKey): the admin document must name
 * that reason on the operation's 409.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildAdminGateway, storesLosingAnswers } from './helpers.js';

t.test('a retried issue whose first key was revoked meanwhile: 409 key_inactive, as the document says', async (t) => {
  const { stores, control } = storesLosingAnswers();
  const gw = await buildAdminGateway({ stores });
  t.teardown(() => gw.close());
  const issue = () => gw.admin('POST', '/admin/v1/accounts/acme/keys', { body: { name: 'panel', scopes: ['read:products'] }, headers: { 'idempotency-key': 'issue-lost' } });

  control.losing = true;
  const first = await issue();
  assert.equal(first.statusCode, 201, first.body);
  control.losing = false;
  const revoked = await gw.admin('POST', `/admin/v1/keys/${first.json().id}/revoke`);
  assert.equal(revoked.statusCode, 200, revoked.body);
  control.advance(10 * 60_000); // past the claim's lease: the retry runs the handler again
  const retry = await issue();
  assert.equal(retry.statusCode, 409, retry.body);
  assert.equal(retry.json().reason, 'key_inactive');

  const doc = (await gw.admin('GET', '/admin/v1/openapi.json')).json() as {
    paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
  };
  const conflict = doc.paths['/admin/v1/accounts/{id}/keys']?.post?.responses['409'];
  assert.ok(conflict, 'issueKey documents 409');
  assert.match(conflict.description, /`key_inactive`/);
});
