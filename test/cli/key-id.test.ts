/**
 * A key id, as the admin API's /admin/v1/keys/{id} takes it: 16 hex digits (else 400, the value not
 * echoed). The CLI looked any text up and printed it back (`unknown key rk_…_<secret>`): an operator
 * pasting the full key where its id belongs got the secret on stderr, a CI log's content. It is a
 * usage error (64) now, and the text is not printed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { keysCli } from '../../src/cli/keys.js';

const dir = mkdtempSync(join(tmpdir(), 'rg-key-id-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const env: NodeJS.ProcessEnv = { ...process.env, KEYS_FILE: join(dir, 'keys.json'), AUDIT_LOG_FILE: join(dir, 'audit.log'), ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'), CONFIG_FILE: join(process.cwd(), 'config', 'gateway.json') };
  delete env.REDIS_URL;
  const code = await keysCli(BACKENDS, args, { out: (text) => (stdout += text), err: (text) => (stderr += text), env });
  return { code, stdout, stderr };
}

t.test('revoke and rotate take a key id, and never print back a full key given instead', async () => {
  assert.equal((await cli('account', 'add', 'pasted', '--name', 'Pasted', '--upstream-id', '41')).code, 0);
  const issued = JSON.parse((await cli('issue', '--account', 'pasted', '--name', 'ci', '--scopes', 'none', '--json')).stdout) as { id: string; key: string };
  const secret = issued.key.slice(`rk_${issued.id}_`.length);
  for (const command of ['revoke', 'rotate']) {
    const run = await cli(command, issued.key);
    assert.equal(run.code, 64, `${command}: ${run.stderr}`);
    assert.match(run.stderr, /must be a key id \(16 hex digits\)/);
    assert.ok(!run.stderr.includes(secret), `${command} printed the key's secret`);
  }
  const [key] = JSON.parse((await cli('list', '--account', 'pasted', '--json')).stdout) as Array<{ status: string }>;
  assert.equal(key?.status, 'active', 'nothing was done');
  assert.equal((await cli('revoke', issued.id)).code, 0, 'a key id still works');
});
