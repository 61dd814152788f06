/**
 * No admin token and no key the admin API issued reaches a log line or the admin audit log, at the
 * most verbose level, whatever the calls: accepted, refused, replayed, malformed.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { mintAdminToken } from '../../src/admin/tokens.js';
import { TEST_PEPPER, TEST_WEBHOOK_KEY } from '../helpers/gateway.js';
import { buildAdminGateway, type AdminGateway } from './helpers.js';

t.test('no admin secret reaches a log', async (t) => {
  let gw: AdminGateway;
  t.before(async () => {
    gw = await buildAdminGateway({ config: { logLevel: 'trace' } });
  });
  t.teardown(() => gw.close());

  t.test('admin tokens, issued and rotated keys stay out of the app log and the admin audit', async () => {
    const secrets = [TEST_PEPPER, TEST_WEBHOOK_KEY, ...Object.values(gw.tokens).map((each) => each.token)];
    const all = gw.tokens.all?.token as string;
    const stranger = mintAdminToken('stranger', ['admin:keys']).token;
    secrets.push(stranger);

    const issued = await gw.admin('POST', '/admin/v1/accounts/acme/keys', { body: { name: 'log-test', scopes: ['read:services'] }, headers: { 'idempotency-key': 'log-1' } });
    assert.equal(issued.statusCode, 201);
    secrets.push(issued.json().key);
    await gw.admin('POST', '/admin/v1/accounts/acme/keys', { body: { name: 'log-test', scopes: ['read:services'] }, headers: { 'idempotency-key': 'log-1' } });
    const rotated = await gw.admin('POST', `/admin/v1/keys/${issued.json().id}/rotate`, { body: { grace_seconds: 60 }, headers: { 'idempotency-key': 'log-2' } });
    assert.equal(rotated.statusCode, 201);
    secrets.push(rotated.json().new.key);

    // Refused and malformed calls: tokens in the wrong place, a key sent as an admin token, secrets in bodies and paths.
    await gw.admin('GET', '/admin/v1/accounts', { token: stranger });
    await gw.admin('GET', '/admin/v1/accounts', { token: null, headers: { authorization: `Basic ${Buffer.from(`panel:${all}`).toString('base64')}` } });
    await gw.admin('GET', `/admin/v1/accounts?token=${all}&page=1`, { token: null });
    await gw.admin('GET', '/admin/v1/accounts', { token: issued.json().key });
    await gw.admin('POST', '/admin/v1/accounts', { body: { id: 'x', name: 'x', upstream_id: '1', token: all, secret: issued.json().key } });
    await gw.admin('POST', '/admin/v1/accounts/acme/keys', { body: { name: all, scopes: ['nope'] }, headers: { 'idempotency-key': 'log-3' } });
    await gw.admin('GET', `/admin/v1/accounts/${encodeURIComponent(all)}`);
    await gw.admin('GET', `/admin/v1/keys/${encodeURIComponent(all)}`);
    // A control character ahead of it: removed before the secret check, not after.
    await gw.admin('GET', `/admin/v1/accounts/${encodeURIComponent(`\u0001${all}`)}`);
    await gw.app.inject({ method: 'GET', url: '/admin/v1/accounts', headers: { authorization: `Bearer ${all}` } });
    await gw.app.inject({ method: 'GET', url: '/v1/services', headers: { authorization: `Bearer ${rotated.json().new.key}` } });

    const output = gw.logs.join('');
    assert.match(output, /"url":"\/v1\/services"/, 'the public requests were logged');
    assert.match(output, /admin API on the ops listener/);
    const audit = JSON.stringify(gw.adminAudit.records);
    assert.ok(gw.adminAudit.records.length >= 10);
    assert.ok(gw.adminAudit.records.some((record) => record.account_id === '[redacted]'), 'a token sent as an account id is not recorded');
    for (const secret of secrets) {
      assert.ok(secret.length >= 32);
      const part = secret.slice(-24);
      assert.ok(!output.includes(part), `a secret reached the log: ${secret.slice(0, 8)}…`);
      assert.ok(!audit.includes(part), `a secret reached the admin audit: ${secret.slice(0, 8)}…`);
    }
  });
});
