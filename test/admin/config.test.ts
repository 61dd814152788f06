/**
 * Admin tokens in the config: only their hashes are accepted (a plaintext token stops the start
 * with a message saying what to do instead), names are unique, ADMIN_TOKENS takes the same list as
 * JSON; and the per-token rate limit of the admin API.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { AdminTokens, hashAdminToken, mintAdminToken } from '../../src/admin/tokens.js';
import { ConfigError, parseConfig } from '../../src/config.js';
import { loadConfig } from '../../src/load-config.js';
import { buildAdminGateway } from './helpers.js';

t.test('admin tokens in the config', async (t) => {
  const minted = mintAdminToken('panel', ['admin:read', 'admin:keys']);

  t.test('a minted token: its hash admits it and nothing else', async () => {
    assert.match(minted.token, /^rgadm_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(minted.entry, { name: 'panel', hash: hashAdminToken(minted.token), scopes: ['admin:read', 'admin:keys'] });
    const tokens = new AdminTokens([minted.entry, mintAdminToken('other', ['admin:read']).entry]);
    assert.equal(tokens.find(minted.token)?.name, 'panel');
    assert.equal(tokens.find(`${minted.token.slice(0, -1)}${minted.token.endsWith('A') ? 'B' : 'A'}`), null);
    assert.equal(tokens.find(minted.entry.hash), null, 'the hash is not a token');
  });

  t.test('ADMIN_TOKENS (JSON) sets them; none: the admin API is off', async () => {
    assert.deepEqual(loadConfig(BACKENDS, {}).admin.tokens, []);
    const config = loadConfig(BACKENDS, { ADMIN_TOKENS: JSON.stringify([minted.entry]), ADMIN_AUDIT_LOG_FILE: '/var/log/admin.log' });
    assert.deepEqual(config.admin.tokens, [minted.entry]);
    assert.equal(config.admin.auditFile, '/var/log/admin.log');
  });

  t.test('refuses plaintext tokens, bad hashes, unknown scopes and twice-used names, naming each', async () => {
    const refused = (tokens: unknown, pattern: RegExp) => {
      assert.throws(() => parseConfig({ admin: { tokens } }, BACKENDS), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, pattern);
        assert.ok(!error.message.includes(minted.token), 'the message does not repeat the token');
        return true;
      });
    };
    refused([{ name: 'panel', token: minted.token, scopes: ['admin:read'] }], /admin\.tokens\.0\.token: plaintext admin tokens are not accepted.*admin-token create/);
    refused([{ ...minted.entry, hash: minted.token }], /admin\.tokens\.0\.hash: must be sha256:/);
    refused([{ ...minted.entry, scopes: ['read:services'] }], /admin\.tokens\.0\.scopes\.0/);
    refused([{ ...minted.entry, scopes: [] }], /admin\.tokens\.0\.scopes/);
    refused([minted.entry, minted.entry], /admin\.tokens\.1\.name: the name panel is used twice/);
    assert.throws(() => loadConfig(BACKENDS, { ADMIN_TOKENS: `[${minted.token}` }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.message, 'ADMIN_TOKENS must be JSON');
      return true;
    });
  });
});

t.test('admin rate limit', async (t) => {
  t.test('per token: past admin.perMinute a token gets 429 with Retry-After; another token does not', async () => {
    const gw = await buildAdminGateway({ admin: { perMinute: 3 } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await gw.admin('GET', '/admin/v1/accounts', { token: 'admin:read' })).statusCode);
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      const limited = await gw.admin('GET', '/admin/v1/accounts/acme', { token: 'admin:read' });
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.json().reason, 'rate_limited');
      assert.ok(Number(limited.headers['retry-after']) >= 1);
      assert.equal((await gw.admin('GET', '/admin/v1/accounts', { token: 'all' })).statusCode, 200, 'another token has its own budget');
      const record = gw.adminAudit.records.at(-2);
      assert.deepEqual([record?.token, record?.status, record?.outcome], ['only-admin-read', 429, 'refused']);
    } finally {
      await gw.close();
    }
  });
});
