/**
 * The state `reseller-keys list` (and rotate, revoke) prints for a key. A key rotated with a
 * grace period still works until the grace ends, but the CLI printed it as `revoked <end>` (any
 * revokedAt, future or past), and an expired key as `expires <past time>`: an operator checking
 * which keys work read the opposite of what the gateway does. The state is the admin API's
 * (`status`: active, revoked, expired), with the end of an active key's life beside it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { keysCli } from '../../src/cli/keys.js';

t.test('reseller-keys prints the state the gateway acts on', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-review-cli-state-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const keysFile = join(dir, 'keys.json');
  const env: NodeJS.ProcessEnv = { ...process.env, KEYS_FILE: keysFile, AUDIT_LOG_FILE: join(dir, 'audit.log'), ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log')};
  delete env.CONFIG_FILE;
  delete env.REDIS_URL;
  const cli = async (...args: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await keysCli(BACKENDS, args, { out: (text) => (stdout += text), err: (text) => (stderr += text), env });
    assert.equal(code, 0, stderr);
    return stdout;
  };
  const line = (output: string, id: string) => output.split('\n').find((each) => each.startsWith(`${id} `)) ?? '';

  await cli('account', 'add', 'acme', '--name', 'Acme', '--upstream-id', '1');
  const issued = JSON.parse(await cli('issue', '--account', 'acme', '--name', 'ci', '--scopes', 'none', '--json')) as { id: string };
  const rotated = JSON.parse(await cli('rotate', issued.id, '--grace', '3600', '--json')) as { old: { revoked_at: string }; new: { id: string } };

  const inGrace = line(await cli('list', '--account', 'acme'), issued.id);
  assert.doesNotMatch(inGrace, /\brevoked\b/, `a key in its grace period works: ${inGrace}`);
  assert.match(inGrace, /\bactive\b/);
  assert.ok(inGrace.includes(rotated.old.revoked_at), `and says until when: ${inGrace}`);

  const revokedId = rotated.new.id;
  assert.match(line(await cli('revoke', revokedId), revokedId), /\brevoked \d{4}-/);

  // An expired key (its expiry passed since it was issued), written as the store keeps it.
  const expiring = JSON.parse(await cli('issue', '--account', 'acme', '--name', 'short', '--scopes', 'none', '--expires', '2030-01-01T00:00:00Z', '--json')) as { id: string };
  const file = JSON.parse(readFileSync(keysFile, 'utf8')) as { keys: Record<string, { expiresAt: string }> };
  (file.keys[expiring.id] as { expiresAt: string }).expiresAt = '2020-01-01T00:00:00.000Z';
  writeFileSync(keysFile, JSON.stringify(file));
  const expired = line(await cli('list', '--account', 'acme'), expiring.id);
  assert.match(expired, /\bexpired 2020-01-01T00:00:00.000Z/, expired);
});
