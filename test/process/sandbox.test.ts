/**
 * The process as an operator runs it: `bin/gateway.ts` in sandbox mode (SANDBOX=1) prints working demo keys, the
 * key CLI issues and revokes keys for the running gateway, SIGTERM shuts down cleanly, and a bad
 * config stops the process with a clear message.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { call } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';

const TSX = ['--import', 'tsx'];

function runCli(env: NodeJS.ProcessEnv, ...args: string[]) {
  return spawnSync(process.execPath, [...TSX, 'bin/reseller-keys.ts', ...args], { env, encoding: 'utf8', timeout: 30_000 });
}

t.test('sandbox process', async (t) => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let server: ChildProcess;
  let output = '';
  let base: string;

  t.before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rg-sandbox-'));
    env = { ...process.env, SANDBOX: '1', PORT: '0', OPS_PORT: '0', HOST: '127.0.0.1', KEYS_FILE: join(dir, 'keys.json'), AUDIT_LOG_FILE: join(dir, 'audit.log'), ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'), LOG_LEVEL: 'warn' };
    delete env.REDIS_URL;
    server = spawn(process.execPath, [...TSX, 'bin/gateway.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout?.on('data', (chunk) => (output += String(chunk)));
    server.stderr?.on('data', (chunk) => (output += String(chunk)));
    base = await waitFor(async () => /on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1], 30_000);
    await waitFor(async () => (output.includes('try: curl') ? true : undefined), 10_000);
  });
  t.teardown(() => {
    if (server.exitCode === null) server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const demoKey = (account: string, name: string) => new RegExp(`${account}\\s+${name}\\s+(rk_\\S+)`).exec(output)?.[1];

  t.test('prints demo keys that work: all scopes and read-only, per account', async () => {
    const all = demoKey('acme', 'sandbox-all');
    const readOnly = demoKey('acme', 'sandbox-read-only');
    assert.ok(all && readOnly && demoKey('beta', 'sandbox-all'), output);
    assert.match(output, /upstream: whmcs at http:\/\/127\.0\.0\.1:\d+ \(local sandbox upstream\)/, 'says which backend it serves, and where');
    const me = await call(base, 'GET', '/v1/me', { key: all });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.json().account.id, 'acme');
    const order = await call(base, 'POST', '/v1/orders', { key: readOnly, body: { product_id: '1', billing_cycle: 'monthly' }, headers: { 'idempotency-key': 'ro-1' } });
    assert.equal(order.status, 403);
  });

  t.test('the key CLI issues a key the running gateway accepts, and revokes it', async () => {
    const issued = runCli(env, 'issue', '--account', 'acme', '--name', 'cli-test', '--scopes', 'read:billing');
    assert.equal(issued.status, 0, issued.stderr);
    const key = /key \(shown once, store it now\): (rk_\S+)/.exec(issued.stdout)?.[1];
    assert.ok(key, issued.stdout);
    const balance = await call(base, 'GET', '/v1/billing/balance', { key });
    assert.equal(balance.status, 200, balance.text);
    const listed = runCli(env, 'list', '--account', 'acme');
    assert.match(listed.stdout, /name=cli-test\s+active/);
    assert.ok(!listed.stdout.includes(key), 'list never shows a key');
    const keyId = /^rk_([0-9a-f]{16})_/.exec(key)?.[1] as string;
    assert.equal(runCli(env, 'revoke', keyId).status, 0);
    const status = await waitFor(async () => {
      const response = await call(base, 'GET', '/v1/billing/balance', { key });
      return response.status === 401 ? response.status : undefined;
    }, 10_000);
    assert.equal(status, 401);
    // Rotating a revoked (maybe leaked) key must not bring it back for a grace period.
    const rotated = runCli(env, 'rotate', keyId, '--grace', '3600');
    assert.equal(rotated.status, 1, rotated.stdout);
    assert.match(rotated.stderr, new RegExp(`key ${keyId} is revoked .*cannot be rotated`));
    assert.doesNotMatch(rotated.stdout, /rk_/, 'no successor key');
    assert.equal((await call(base, 'GET', '/v1/billing/balance', { key })).status, 401);
  });

  t.test('the CLI refuses bad input with a usage message', async () => {
    const bad = runCli(env, 'issue', '--account', 'acme', '--name', 'x', '--scopes', 'read:everything');
    assert.equal(bad.status, 64);
    assert.match(bad.stderr, /unknown scope\(s\): read:everything/);
    const badBurst = runCli(env, 'issue', '--account', 'acme', '--name', 'x', '--scopes', 'all', '--burst', 'abc');
    assert.equal(badBurst.status, 64);
    assert.match(badBurst.stderr, /--burst must be a whole number/);
  });

  t.test('SIGTERM shuts the gateway down cleanly', async () => {
    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    server.kill('SIGTERM');
    assert.equal(await exited, 0);
  });
});

t.test('bad configuration', async (t) => {
  t.test('stops the process with every wrong field named', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rg-config-'));
    try {
      const file = join(dir, 'bad.json');
      writeFileSync(file, JSON.stringify({ port: 'eighty', profile: 'C', rateLimits: { keyPerMinute: -1 } }));
      const result = spawnSync(process.execPath, [...TSX, 'bin/gateway.ts'], { env: { ...process.env, CONFIG_FILE: file }, encoding: 'utf8', timeout: 30_000 });
      assert.equal(result.status, 78);
      for (const field of ['port', 'profile', 'rateLimits.keyPerMinute']) assert.match(result.stderr, new RegExp(`- ${field.replace('.', '\\.')}:`));
      const noPepper = spawnSync(process.execPath, [...TSX, 'bin/gateway.ts'], {
        env: { ...process.env, CONFIG_FILE: join(dir, 'none.json') },
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(noPepper.status, 78);
      assert.match(noPepper.stderr, /cannot read config file/);
      const upstreamWithoutPepper = spawnSync(process.execPath, [...TSX, 'bin/gateway.ts'], {
        env: { ...process.env, WHMCS_URL: 'https://billing.example.com', WHMCS_IDENTIFIER: 'id', WHMCS_SECRET: 'secret', KEY_PEPPER: '' },
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(upstreamWithoutPepper.status, 78);
      assert.match(upstreamWithoutPepper.stderr, /keys\.pepper/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
