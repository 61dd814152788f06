/**
 * The `reseller-keys` binary as an operator runs it: its output and exit codes reach the shell, and
 * it exits once done (the store closed). What each command does is tested in this process
 * (test/cli/keys-cli.test.ts).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

t.test('reseller-keys process', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-keys-bin-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = { ...process.env, KEYS_FILE: join(dir, 'keys.json'), AUDIT_LOG_FILE: join(dir, 'audit.log'), ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'), CONFIG_FILE: join(process.cwd(), 'config', 'gateway.json') };
  delete env.REDIS_URL;
  const cli = (overrides: NodeJS.ProcessEnv, ...args: string[]) =>
    new Promise<Run>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'bin/reseller-keys.ts', ...args], { env: { ...env, ...overrides }, timeout: 60_000 }, (error, stdout, stderr) => {
        // A run killed by the time limit has no exit code: -1, never mistaken for success.
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
      });
    });

  const [help, usage, config, added] = await Promise.all([
    cli({}, '--help'),
    cli({}, 'frobnicate', '--json'),
    cli({ CONFIG_FILE: join(dir, 'none.json') }, 'list'),
    cli({}, 'account', 'add', 'acme', '--name', 'Acme', '--upstream-id', '1', '--json'),
  ]);
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /^usage: reseller-keys/);
  assert.equal(usage.code, 64);
  assert.deepEqual(JSON.parse(usage.stderr), { error: 'unknown command frobnicate', exit_code: 64 });
  assert.equal(config.code, 78, 'a missing config file stops it with EX_CONFIG');
  assert.match(config.stderr, /none\.json/);
  assert.equal(added.code, 0, added.stderr);
  assert.equal(JSON.parse(added.stdout).id, 'acme', 'done and exited, the key file written');
});
