/**
 * The key CLI's surface: help on every command (`--help` and `-h`, no config or store needed),
 * `--json` output that a script can use (never the secret's hash), and the documented exit codes.
 * Run in this process (keysCli with its output captured); test/process/keys-cli.test.ts runs the
 * binary itself.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { AdminTokens, AdminTokenSchema, hashAdminToken } from '../../src/admin/tokens.js';
import { keysCli } from '../../src/cli/keys.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

t.test('reseller-keys', async (t) => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const cli = async (...args: string[]): Promise<Run> => {
    let stdout = '';
    let stderr = '';
    const code = await keysCli(BACKENDS, args, { out: (text) => (stdout += text), err: (text) => (stderr += text), env });
    return { code, stdout, stderr };
  };

  t.before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rg-keys-cli-'));
    env = { ...process.env, KEYS_FILE: join(dir, 'keys.json'), AUDIT_LOG_FILE: join(dir, 'audit.log'), ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'), CONFIG_FILE: join(dir, 'none.json') };
    delete env.REDIS_URL;
  });
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));

  t.test('--help (and -h) answer on every command, with the exit codes, even without a config', async () => {
    // CONFIG_FILE names a missing file: any command but help would stop with 78.
    const commands = [[], ['account'], ['account', 'add'], ['account', 'list'], ['account', 'disable'], ['account', 'enable'], ['issue'], ['list'], ['rotate'], ['revoke'], ['admin-token']];
    // -h is the same option as --help: checked on two commands, --help on all.
    const runs = commands.flatMap((command) => (command.length === 0 || command[0] === 'issue' ? ['--help', '-h'] : ['--help']).map((flag) => [...command, flag]));
    const results: Run[] = [];
    for (const args of runs) results.push(await cli(...args));
    for (const [index, args] of runs.entries()) {
      const run = results[index] as Run;
      const command = args.slice(0, -1);
      const where = `${command.join(' ') || '(none)'} ${args.at(-1)}`;
      assert.equal(run.code, 0, `${where}: ${run.stderr}`);
      assert.match(run.stdout, new RegExp(`^usage: reseller-keys ${command.join(' ')}`), where);
      assert.match(run.stdout, /exit codes:\n {2}0 {3}done/, where);
    }
    assert.match((results[runs.findIndex((args) => args[0] === 'issue')] as Run).stdout, /--scopes .*read:products/);
  });

  t.test('unknown options and commands are usage errors (64) with the help, not a stack trace', async () => {
    const unknownOption = await cli('list', '--bogus');
    assert.equal(unknownOption.code, 64);
    assert.match(unknownOption.stderr, /Unknown option '--bogus'[\s\S]*usage: reseller-keys list/);
    assert.doesNotMatch(unknownOption.stderr, /\n\s+at /);
    const json = await cli('frobnicate', '--json');
    assert.equal(json.code, 64);
    assert.deepEqual(JSON.parse(json.stderr), { error: 'unknown command frobnicate', exit_code: 64 });
  });

  t.test('--json prints records a script can use; the key once, never its hash', async () => {
    env.CONFIG_FILE = join(process.cwd(), 'config', 'gateway.json');
    const account = await cli('account', 'add', 'acme', '--name', 'Acme', '--upstream-id', '1', '--json');
    assert.equal(account.code, 0, account.stderr);
    assert.equal(JSON.parse(account.stdout).upstream_id, '1');
    const past = await cli('issue', '--account', 'acme', '--name', 'ci', '--expires', '2020-01-01T00:00:00Z');
    assert.equal(past.code, 64, 'a key that would never work is a usage error');
    assert.match(past.stderr, /--expires must be in the future/);
    const issued = await cli('issue', '--account', 'acme', '--name', 'ci', '--scopes', 'read:billing', '--json');
    assert.equal(issued.code, 0, issued.stderr);
    const record = JSON.parse(issued.stdout) as { id: string; key: string; scopes: string[] };
    assert.match(record.key, new RegExp(`^rk_${record.id}_`));
    assert.deepEqual(record.scopes, ['read:billing']);
    const listed = JSON.parse((await cli('list', '--account', 'acme', '--json')).stdout) as Array<Record<string, unknown>>;
    assert.deepEqual(listed.map((key) => key.id), [record.id]);
    for (const key of listed) assert.ok(!('secretHash' in key) && !('key' in key), 'list shows neither hash nor key');
    const revoked = JSON.parse((await cli('revoke', record.id, '--json')).stdout) as { revoked_at: string | null; status: string };
    assert.ok(revoked.revoked_at);
    assert.equal(revoked.status, 'revoked');
    const refused = await cli('rotate', record.id, '--json');
    assert.equal(refused.code, 1);
    assert.equal(JSON.parse(refused.stderr).exit_code, 1);
    const bare = await cli('issue', '--account', 'acme', '--name', 'health', '--scopes', 'none', '--json');
    assert.equal(bare.code, 0, bare.stderr);
    assert.deepEqual(JSON.parse(bare.stdout).scopes, [], 'none: a key for GET /v1/me only, as the admin API\'s []');
  });

  t.test('names and the upstream id are checked as the admin API checks them: control characters are a usage error', async () => {
    env.CONFIG_FILE = join(process.cwd(), 'config', 'gateway.json');
    const account = await cli('account', 'add', 'ctl', '--name', 'Ctl\nfake line', '--upstream-id', '6', '--json');
    assert.equal(account.code, 64, account.stderr);
    assert.deepEqual(JSON.parse(account.stderr), { error: '--name must not contain control characters', exit_code: 64 });
    assert.equal((await cli('account', 'add', 'ctl', '--name', 'Ctl', '--upstream-id', '6\u001b[2J')).code, 64);
    assert.equal((await cli('account', 'add', 'ctl', '--name', 'x'.repeat(201), '--upstream-id', '6')).code, 64, 'longer than the API allows');
    assert.equal((await cli('account', 'add', 'ctl', '--name', 'Ctl', '--upstream-id', '6')).code, 0);
    const key = await cli('issue', '--account', 'ctl', '--name', 'ci\r', '--scopes', 'all');
    assert.equal(key.code, 64, key.stderr);
    assert.deepEqual(JSON.parse((await cli('list', '--account', 'ctl', '--json')).stdout), [], 'no key issued');
  });

  t.test('account add checks the id as the admin API does: nothing is created from an id the API would refuse', async () => {
    env.CONFIG_FILE = join(process.cwd(), 'config', 'gateway.json');
    for (const id of ['a\nfake line', 'a/b', '../x', '_lead', 'a b', '{acct}', 'x'.repeat(65), 'é']) {
      const run = await cli('account', 'add', id, '--name', 'Odd', '--upstream-id', '8', '--json');
      assert.equal(run.code, 64, `${JSON.stringify(id)}: ${run.stderr}`);
      assert.match(JSON.parse(run.stderr).error, /^the account id must be 1 to 64 characters/);
    }
    assert.deepEqual((JSON.parse((await cli('account', 'list', '--json')).stdout) as Array<{ name: string }>).filter((account) => account.name === 'Odd'), [], 'none created');
    assert.equal((await cli('account', 'add', 'Z9_a.b-c', '--name', 'Odd', '--upstream-id', '8')).code, 0, 'every character the API allows');
  });

  t.test('issue --expires takes an RFC 3339 time with its offset, as the admin API does, not any date Date.parse reads', async () => {
    env.CONFIG_FILE = join(process.cwd(), 'config', 'gateway.json');
    assert.equal((await cli('account', 'add', 'eps', '--name', 'Eps', '--upstream-id', '7')).code, 0);
    // Day and month order, and the machine's time zone, would decide when these end.
    for (const expires of ['1/2/2030', '2030-01-01 10:00', '2030', 'Tue Jan 01 2030']) {
      const run = await cli('issue', '--account', 'eps', '--name', 'ci', '--scopes', 'all', '--expires', expires, '--json');
      assert.equal(run.code, 64, `--expires ${expires}: ${run.stdout}`);
      assert.match(JSON.parse(run.stderr).error, /^--expires must be an RFC 3339 time/);
    }
    assert.deepEqual(JSON.parse((await cli('list', '--account', 'eps', '--json')).stdout), [], 'no key issued');
    const issued = await cli('issue', '--account', 'eps', '--name', 'ci', '--scopes', 'all', '--expires', '2030-01-01T10:00:00+02:00', '--json');
    assert.equal(issued.code, 0, issued.stderr);
    assert.equal(JSON.parse(issued.stdout).expires_at, '2030-01-01T08:00:00.000Z');
  });

  t.test('limit overrides are checked with the admin API\'s schema: one it would refuse is a usage error, and no key is made', async () => {
    env.CONFIG_FILE = join(process.cwd(), 'config', 'gateway.json');
    assert.equal((await cli('account', 'add', 'lim', '--name', 'Lim', '--upstream-id', '9')).code, 0);
    // Past JavaScript's safe integers the admin API answers 400, and could not show such a key.
    for (const [option, value] of [['--per-minute', '99999999999999999999'], ['--per-minute', '0'], ['--per-day', '0'], ['--burst', '1.5'], ['--per-day', '1e3']]) {
      const run = await cli('issue', '--account', 'lim', '--name', 'ci', '--scopes', 'none', option as string, value as string, '--json');
      assert.equal(run.code, 64, `${option} ${value}: ${run.stdout}`);
      assert.match(JSON.parse(run.stderr).error, new RegExp(`^${option}`));
    }
    assert.deepEqual(JSON.parse((await cli('list', '--account', 'lim', '--json')).stdout), [], 'no key issued');
    const issued = await cli('issue', '--account', 'lim', '--name', 'ci', '--scopes', 'none', '--per-minute', '10', '--burst', '0', '--per-day', '100', '--json');
    assert.equal(issued.code, 0, issued.stderr);
    assert.deepEqual(JSON.parse(issued.stdout).rate_limits, { per_minute: 10, burst: 0, per_day: 100 });
  });

  t.test('account disable refuses new keys for the account until it is enabled again', async () => {
    env.CONFIG_FILE = join(process.cwd(), 'config', 'gateway.json');
    assert.equal((await cli('account', 'add', 'delta', '--name', 'Delta', '--upstream-id', '4')).code, 0);
    const disabled = await cli('account', 'disable', 'delta', '--json');
    assert.equal(disabled.code, 0, disabled.stderr);
    assert.ok(JSON.parse(disabled.stdout).disabled_at);
    const refused = await cli('issue', '--account', 'delta', '--name', 'ci', '--scopes', 'all');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /account delta is disabled/);
    assert.equal((await cli('account', 'enable', 'delta')).code, 0);
    assert.equal((await cli('issue', '--account', 'delta', '--name', 'ci', '--scopes', 'all')).code, 0);
    assert.equal((await cli('account', 'disable', 'nobody')).code, 1);
  });

  t.test('rotate --grace is bounded as the admin API bounds it: beyond 30 days a usage error, and no key is made', async () => {
    env.CONFIG_FILE = join(process.cwd(), 'config', 'gateway.json');
    assert.equal((await cli('account', 'add', 'gamma', '--name', 'Gamma', '--upstream-id', '5')).code, 0);
    const issued = JSON.parse((await cli('issue', '--account', 'gamma', '--name', 'ci', '--scopes', 'all', '--json')).stdout) as { id: string };
    // 31 days (the admin API answers 400), and a grace past the last representable date.
    for (const grace of [String(31 * 86_400), '9999999999999', '1e3', '']) {
      const run = await cli('rotate', issued.id, '--grace', grace, '--json');
      assert.equal(run.code, 64, `--grace ${grace}: ${run.stderr}`);
      assert.match(JSON.parse(run.stderr).error, /--grace/);
    }
    const listed = JSON.parse((await cli('list', '--account', 'gamma', '--json')).stdout) as Array<{ id: string; revoked_at: string | null }>;
    assert.deepEqual(listed.map((key) => [key.id, key.revoked_at]), [[issued.id, null]], 'no successor made, the old key untouched');
    assert.equal((await cli('rotate', issued.id, '--grace', String(30 * 86_400))).code, 0, '30 days is allowed');
  });

  t.test('admin-token create prints the token once and the config entry with its hash, without a config', async () => {
    env.CONFIG_FILE = join(dir, 'none.json');
    const text = await cli('admin-token', 'create', '--name', 'panel', '--scopes', 'admin:accounts,admin:read');
    assert.equal(text.code, 0, text.stderr);
    const token = /: (rgadm_\S+)\n/.exec(text.stdout)?.[1] as string;
    const entry = AdminTokenSchema.parse(JSON.parse(text.stdout.trim().split('\n').at(-1) as string));
    assert.deepEqual(entry, { name: 'panel', hash: hashAdminToken(token), scopes: ['admin:accounts', 'admin:read'] });
    assert.equal(new AdminTokens([entry]).find(token)?.name, 'panel');
    const json = JSON.parse((await cli('admin-token', 'create', '--name', 'ops', '--scopes', 'all', '--json')).stdout);
    assert.deepEqual(json.entry.scopes, ['admin:accounts', 'admin:keys', 'admin:webhooks', 'admin:read']);
    assert.notEqual(json.token, token, 'a new token every time');
    const bad = await cli('admin-token', 'create', '--name', 'panel', '--scopes', 'read:services');
    assert.equal(bad.code, 64);
    assert.match(bad.stderr, /unknown scope\(s\): read:services/);
  });
});
