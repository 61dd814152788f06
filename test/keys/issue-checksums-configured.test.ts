/**
 * `keys.issueChecksums` reaches every place a key is issued: the admin API of a
 * gateway and the key CLI. The setting was tested on the key service alone; with it dropped on
 * either way in, an operator who turned it on (secret scanners can then tell a real key offline)
 * still got keys without a checksum, with no word.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { keysCli } from '../../src/cli/keys.js';
import { keyChecksum } from '../../src/keys/api-key.js';
import { TEST_PEPPER } from '../helpers/gateway.js';
import { buildAdminGateway } from '../admin/helpers.js';

const WITH_CHECKSUM = /^(rk_[0-9a-f]{16}_[A-Za-z0-9_-]{43})([0-9A-Za-z]{6})$/;

function assertChecksummed(key: string): void {
  const match = WITH_CHECKSUM.exec(key);
  assert.ok(match, `a key with its checksum: ${key.length} characters`);
  assert.equal(match[2], keyChecksum(match[1] as string));
}

t.test('admin API with keys.issueChecksums: the key it issues carries its checksum', async (t) => {
  const gw = await buildAdminGateway({ config: { keys: { pepper: TEST_PEPPER, issueChecksums: true } } });
  t.teardown(() => gw.close());
  const issued = await gw.admin('POST', '/admin/v1/accounts/acme/keys', { body: { name: 'panel', scopes: ['read:services'] }, headers: { 'idempotency-key': 'checksum-1' } });
  assert.equal(issued.statusCode, 201, issued.body);
  assertChecksummed(issued.json().key);
});

t.test('key CLI with keys.issueChecksums: the key it issues carries its checksum', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-cli-checksum-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = JSON.parse(readFileSync(join(process.cwd(), 'config', 'gateway.json'), 'utf8'));
  config.keys = { ...config.keys, issueChecksums: true };
  writeFileSync(join(dir, 'gateway.json'), JSON.stringify(config));
  const env: NodeJS.ProcessEnv = { ...process.env, KEYS_FILE: join(dir, 'keys.json'), AUDIT_LOG_FILE: join(dir, 'audit.log'), ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'), CONFIG_FILE: join(dir, 'gateway.json'), KEY_PEPPER: TEST_PEPPER };
  delete env.REDIS_URL;
  let stdout = '';
  let stderr = '';
  const cli = (...args: string[]) => keysCli(BACKENDS, args, { out: (text) => (stdout += text), err: (text) => (stderr += text), env });
  assert.equal(await cli('account', 'add', 'acme', '--name', 'Acme', '--upstream-id', '1'), 0, stderr);
  stdout = '';
  assert.equal(await cli('issue', '--account', 'acme', '--name', 'panel', '--scopes', 'read:services', '--json'), 0, stderr);
  assertChecksummed(JSON.parse(stdout).key);
});
