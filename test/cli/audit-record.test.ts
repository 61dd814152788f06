/**
 * The key CLI leaves the admin API's audit trail: each command that reaches the store appends one
 * `admin.call` record to `admin.auditFile`, naming the CLI user as actor, the admin API's operation,
 * the ids and the outcome; never a key.
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

const keysFile = join(dir, 'keys.json');
const auditFile = join(dir, 'admin-audit.log');

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KEYS_FILE: keysFile,
    AUDIT_LOG_FILE: join(dir, 'audit.log'),
    ADMIN_AUDIT_LOG_FILE: auditFile,
    CONFIG_FILE: join(process.cwd(), 'config', 'gateway.json'),
  };
  delete env.REDIS_URL;
  const code = await keysCli(BACKENDS, args, { out: (text) => (stdout += text), err: (text) => (stderr += text), env });
  return { code, stdout, stderr };
}

function records(): Array<Record<string, unknown>> {
  if (!existsSync(auditFile)) return [];
  return readFileSync(auditFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
}

t.test('each changing command writes one record: actor, operation, ids, outcome; never the key', async () => {
  assert.equal((await cli('account', 'add', 'audited', '--name', 'Audited', '--upstream-id', '31')).code, 0);
  const issued = await cli('issue', '--account', 'audited', '--name', 'ci', '--scopes', 'all', '--json');
  assert.equal(issued.code, 0, issued.stderr);
  const { id: keyId, key } = JSON.parse(issued.stdout) as { id: string; key: string };
  const rotated = await cli('rotate', keyId, '--json');
  assert.equal(rotated.code, 0, rotated.stderr);
  const { new: successor } = JSON.parse(rotated.stdout) as { new: { id: string; key: string } };
  assert.equal((await cli('revoke', successor.id)).code, 0);
  assert.equal((await cli('account', 'disable', 'audited')).code, 0);

  const written = records();
  assert.deepEqual(
    written.map((r) => [r.operation, r.account_id, r.key_id, r.new_key_id, r.outcome, r.exit_code]),
    [
      ['createAccount', 'audited', null, null, 'done', 0],
      ['issueKey', 'audited', null, keyId, 'done', 0],
      ['rotateKey', 'audited', keyId, successor.id, 'done', 0],
      ['revokeKey', 'audited', successor.id, null, 'done', 0],
      ['disableAccount', 'audited', null, null, 'done', 0],
    ],
  );
  for (const record of written) {
    assert.equal(record.event, 'admin.call');
    assert.match(String(record.actor), /^cli:[^@\s]+@[^@\s]+$/);
    assert.equal(record.token, null);
    assert.equal(record.reason, null);
  }
  const text = readFileSync(auditFile, 'utf8');
  assert.ok(!text.includes(key) && !text.includes(successor.key), 'no key in the audit log');
});

t.test('a refused command is recorded with its exit code and the admin API reason', async () => {
  const before = records().length;
  const unknown = await cli('revoke', '0123456789abcdef');
  assert.equal(unknown.code, 1);
  const [record] = records().slice(before);
  assert.ok(record, 'a record for the refusal');
  assert.equal(record.operation, 'revokeKey');
  assert.equal(record.key_id, '0123456789abcdef');
  assert.equal(record.outcome, 'refused');
  assert.equal(record.exit_code, 1);
  assert.equal(record.reason, 'not_found');
});

t.test('a full key pasted as the key id: refused (64), recorded redacted', async () => {
  const before = records().length;
  const pasted = 'rk_0123456789abcdef_' + 'A'.repeat(43);
  assert.equal((await cli('revoke', pasted)).code, 64);
  const [record] = records().slice(before);
  assert.ok(record, 'a record for the refusal');
  assert.equal(record.key_id, '[redacted]');
  assert.equal(record.exit_code, 64);
  assert.equal(record.reason, 'invalid_request');
  assert.ok(!readFileSync(auditFile, 'utf8').includes(pasted));
});

t.test('reads are recorded as the admin API records them', async () => {
  const before = records().length;
  assert.equal((await cli('list', '--account', 'audited')).code, 0);
  assert.equal((await cli('account', 'list')).code, 0);
  assert.deepEqual(records().slice(before).map((r) => [r.operation, r.account_id, r.outcome]), [
    ['listKeys', 'audited', 'done'],
    ['listAccounts', null, 'done'],
  ]);
});
