/**
 * The key CLI's audit records say how each command ended as the admin API's do: `status` is the
 * admin API's status for the same ending (201 created, 200 done, 400 usage, 404 unknown, 409
 * conflict, 503 store down), and `admin-token create`, which makes a credential for the admin API,
 * leaves a record naming the token, never the token itself or its hash.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { keysCli } from '../../src/cli/keys.js';

const dir = mkdtempSync(join(tmpdir(), 'rg-cli-audit-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const auditFile = join(dir, 'admin-audit.log');

async function cli(env: NodeJS.ProcessEnv, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await keysCli(BACKENDS, args, { out: (text) => (stdout += text), err: (text) => (stderr += text), env });
  return { code, stdout, stderr };
}

function fileStoreEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KEYS_FILE: join(dir, 'keys.json'),
    AUDIT_LOG_FILE: join(dir, 'audit.log'),
    ADMIN_AUDIT_LOG_FILE: auditFile,
    CONFIG_FILE: join(process.cwd(), 'config', 'gateway.json'),
  };
  delete env.REDIS_URL;
  return env;
}

const onFile = (...args: string[]) => cli(fileStoreEnv(), ...args);

function records(): Array<Record<string, unknown>> {
  if (!existsSync(auditFile)) return [];
  return readFileSync(auditFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
}

t.test('admin-token create is recorded: the token name, never the token or its hash', async () => {
  const before = records().length;
  const minted = await onFile('admin-token', 'create', '--name', 'panel', '--scopes', 'admin:read', '--json');
  assert.equal(minted.code, 0, minted.stderr);
  const { token, entry } = JSON.parse(minted.stdout) as { token: string; entry: { hash: string } };
  const [record] = records().slice(before);
  assert.ok(record, 'a record for the minted token');
  assert.equal(record.operation, 'createAdminToken');
  assert.equal(record.route, 'reseller-keys admin-token create');
  assert.equal(record.new_token, 'panel');
  assert.equal(record.outcome, 'done');
  assert.equal(record.exit_code, 0);
  assert.match(String(record.actor), /^cli:[^@\s]+@[^@\s]+$/);
  const text = readFileSync(auditFile, 'utf8');
  assert.ok(!text.includes(token), 'never the token');
  assert.ok(!text.includes(entry.hash.replace('sha256:', '')), 'never its hash');

  const refused = await onFile('admin-token', 'create', '--name', 'panel', '--scopes', 'read:services');
  assert.equal(refused.code, 64);
  const [refusal] = records().slice(before + 1);
  assert.deepEqual([refusal?.operation, refusal?.outcome, refusal?.reason, refusal?.exit_code], ['createAdminToken', 'refused', 'invalid_request', 64]);
});

t.test('admin-token create still mints without a valid config, and says no record was written', async () => {
  const env = { ...fileStoreEnv(), CONFIG_FILE: join(dir, 'missing.json') };
  const minted = await cli(env, 'admin-token', 'create', '--name', 'bootstrap', '--scopes', 'all');
  assert.equal(minted.code, 0, minted.stderr);
  assert.match(minted.stdout, /rgadm_/);
  assert.match(minted.stderr, /not recorded in the admin audit log/);
});

t.test('status is the admin API status for the same ending, consistent with outcome and reason', async () => {
  const before = records().length;
  assert.equal((await onFile('account', 'add', 'statusy', '--name', 'Statusy', '--upstream-id', '41')).code, 0);
  assert.equal((await onFile('account', 'disable', 'statusy')).code, 0);
  assert.equal((await onFile('account', 'add', 'statusy', '--name', 'Again', '--upstream-id', '42')).code, 1);
  assert.equal((await onFile('revoke', '0123456789abcdef')).code, 1);
  assert.equal((await onFile('issue', '--account', 'statusy', '--name', 'ci')).code, 64);
  assert.deepEqual(
    records().slice(before).map((r) => [r.operation, r.status, r.outcome, r.reason]),
    [
      ['createAccount', 201, 'done', null],
      ['disableAccount', 200, 'done', null],
      ['createAccount', 409, 'refused', 'account_exists'],
      ['revokeKey', 404, 'refused', 'not_found'],
      ['issueKey', 400, 'refused', 'invalid_request'],
    ],
  );
});

t.test('a store that is down: 503 store_unavailable, failed, exit 69', async () => {
  const before = records().length;
  // Port 1: nothing listens there; the CLI gives up after its connect timeout.
  const env = { ...fileStoreEnv(), REDIS_URL: 'redis://127.0.0.1:1', KEY_PEPPER: Buffer.alloc(32, 7).toString('base64') };
  const down = await cli(env, 'list');
  assert.equal(down.code, 69, down.stderr);
  const [record] = records().slice(before);
  assert.deepEqual([record?.operation, record?.status, record?.outcome, record?.reason, record?.exit_code], ['listKeys', 503, 'failed', 'store_unavailable', 69]);
});
