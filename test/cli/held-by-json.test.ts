/**
 * With --json, the CLI's refusal of an upstream customer another account holds names the holder in
 * `held_by`, as the admin API's 409 `upstream_id_taken` does; and the refusal is audited.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { keysCli } from '../../src/cli/keys.js';

const dir = mkdtempSync(join(tmpdir(), 'rg-cli-held-by-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const auditFile = join(dir, 'admin-audit.log');

async function cli(...args: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KEYS_FILE: join(dir, 'keys.json'),
    AUDIT_LOG_FILE: join(dir, 'audit.log'),
    ADMIN_AUDIT_LOG_FILE: auditFile,
    CONFIG_FILE: join(process.cwd(), 'config', 'gateway.json'),
  };
  delete env.REDIS_URL;
  const code = await keysCli(BACKENDS, args, { out: () => undefined, err: (text) => (stderr += text), env });
  return { code, stderr };
}

t.test('account add and update on a held customer: held_by in the JSON error', async () => {
  assert.equal((await cli('account', 'add', 'first', '--name', 'First', '--upstream-id', '21')).code, 0);
  assert.equal((await cli('account', 'add', 'other', '--name', 'Other', '--upstream-id', '22')).code, 0);
  const added = await cli('account', 'add', 'second', '--name', 'Second', '--upstream-id', '21', '--json');
  assert.equal(added.code, 1);
  assert.deepEqual(JSON.parse(added.stderr), { error: 'upstream customer 21 is mapped to account first already; one customer, one account', exit_code: 1, held_by: 'first' });
  const updated = await cli('account', 'update', 'other', '--upstream-id', '21', '--json');
  assert.equal(updated.code, 1);
  assert.equal(JSON.parse(updated.stderr).held_by, 'first');
  const unknown = await cli('revoke', '0123456789abcdef', '--json');
  assert.deepEqual(Object.keys(JSON.parse(unknown.stderr)), ['error', 'exit_code'], 'no held_by for other refusals');

  const records = readFileSync(auditFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  const refused = records.filter((r) => r.reason === 'upstream_id_taken').map((r) => [r.operation, r.account_id, r.outcome]);
  assert.deepEqual(refused, [
    ['createAccount', 'second', 'refused'],
    ['updateAccount', 'other', 'refused'],
  ]);
});
