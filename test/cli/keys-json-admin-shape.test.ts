/**
 * `reseller-keys … --json` printed the store's records (camelCase: accountId, upstreamId,
 * revokedAt, rateLimits.perMinute) where the admin API answers the same records in its own shapes
 * (snake_case, with `status`). Operators script against both: the CLI's JSON is the admin API's
 * shape for an account, a key, an issued key and a rotation (a list: the items of the API's page).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { keysCli } from '../../src/cli/keys.js';
import { buildAdminGateway } from '../admin/helpers.js';

const fields = (value: unknown) => Object.keys(value as object).sort();

t.test('reseller-keys --json answers in the admin API shapes', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-review-cli-json-'));
  const gw = await buildAdminGateway();
  t.teardown(async () => {
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const env: NodeJS.ProcessEnv = { ...process.env, KEYS_FILE: join(dir, 'keys.json'), AUDIT_LOG_FILE: join(dir, 'audit.log'), ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'), CONFIG_FILE: join(process.cwd(), 'config', 'gateway.json') };
  delete env.REDIS_URL;
  const cli = async (...args: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await keysCli(BACKENDS, [...args, '--json'], { out: (text) => (stdout += text), err: (text) => (stderr += text), env });
    assert.equal(code, 0, stderr);
    return JSON.parse(stdout);
  };
  const api = async (method: string, url: string, body?: unknown) => {
    const response = await gw.admin(method, url, { body, headers: method === 'POST' && (url.endsWith('/keys') || url.endsWith('/rotate')) ? { 'idempotency-key': `k-${Math.random()}` } : {} });
    assert.ok(response.statusCode < 300, `${method} ${url}: ${response.body}`);
    return response.json();
  };

  const account = await cli('account', 'add', 'omega', '--name', 'Omega', '--upstream-id', '42');
  const apiAccount = await api('POST', '/admin/v1/accounts', { id: 'omega', name: 'Omega', upstream_id: '42' });
  assert.deepEqual(fields(account), fields(apiAccount), 'account add');
  assert.equal(account.upstream_id, '42');
  assert.equal(account.status, 'active');
  const accounts = (await cli('account', 'list')) as Array<{ id: string }>;
  assert.deepEqual(fields(accounts.find((each) => each.id === 'omega')), fields(apiAccount), 'account list');
  const disabled = await cli('account', 'disable', 'omega');
  assert.equal(disabled.status, 'disabled');
  assert.ok(disabled.disabled_at);
  assert.deepEqual(fields(await cli('account', 'enable', 'omega')), fields(apiAccount), 'account enable');

  const issued = await cli('issue', '--account', 'omega', '--name', 'ci', '--scopes', 'read:billing', '--per-minute', '10', '--burst', '0');
  const apiIssued = await api('POST', '/admin/v1/accounts/omega/keys', { name: 'ci', scopes: ['read:billing'], rate_limits: { per_minute: 10, burst: 0 } });
  assert.deepEqual(fields(issued), fields(apiIssued), 'issue');
  assert.equal(issued.account_id, 'omega');
  assert.deepEqual(issued.rate_limits, { per_minute: 10, burst: 0 });

  const listed = await cli('list', '--account', 'omega');
  const apiListed = await api('GET', '/admin/v1/accounts/omega/keys');
  assert.deepEqual(listed.map(fields), apiListed.data.map(fields), 'list: the items of the admin API page');
  const { key: _key, ...record } = issued;
  assert.deepEqual(listed, [record], 'list shows the issued record, without the key');

  const rotated = await cli('rotate', issued.id, '--grace', '3600');
  const apiRotated = await api('POST', `/admin/v1/keys/${apiIssued.id}/rotate`, { grace_seconds: 3600 });
  assert.deepEqual(fields(rotated), fields(apiRotated), 'rotate');
  assert.deepEqual(fields(rotated.old), fields(apiRotated.old), 'rotate: old');
  assert.deepEqual(fields(rotated.new), fields(apiRotated.new), 'rotate: new');
  assert.equal(rotated.old.status, 'active', 'in its grace period');
  assert.ok(rotated.old.revoked_at);

  const revoked = await cli('revoke', rotated.new.id);
  const apiRevoked = await api('POST', `/admin/v1/keys/${apiRotated.new.id}/revoke`);
  assert.deepEqual(fields(revoked), fields(apiRevoked), 'revoke');
  assert.equal(revoked.status, 'revoked');
});
