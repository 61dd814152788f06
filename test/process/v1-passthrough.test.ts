/**
 * The v1 passthrough as an operator starts it: `BACKEND=v1` in sandbox mode runs a second gateway
 * as the upstream (in the same profile) and says where it is; a production start names the
 * upstream it forwards to, never its keys.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { call } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';

function start(env: NodeJS.ProcessEnv): { process: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (chunk) => (output += String(chunk)));
  child.stderr?.on('data', (chunk) => (output += String(chunk)));
  return { process: child, output: () => output };
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return exited;
}

t.test('BACKEND=v1 sandbox process (profile B)', async (t) => {
  let dir: string;
  let gateway: ReturnType<typeof start>;
  let base: string;
  t.before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rg-v1-'));
    const env: NodeJS.ProcessEnv = { ...process.env, SANDBOX: '1', BACKEND: 'v1', PROFILE: 'B', PORT: '0', OPS_PORT: '0', HOST: '127.0.0.1', KEYS_FILE: join(dir, 'keys.json'), AUDIT_LOG_FILE: join(dir, 'audit.log'), LOG_LEVEL: 'warn' };
    delete env.REDIS_URL;
    gateway = start(env);
    base = await waitFor(() => /on (http:\/\/127\.0\.0\.1:\d+)/.exec(gateway.output())?.[1], 30_000);
    await waitFor(() => (gateway.output().includes('try: curl') ? true : undefined), 10_000);
  });
  t.teardown(async () => {
    if (gateway.process.exitCode === null) gateway.process.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  t.test('says it forwards to a v1 upstream on loopback, and prints only its own demo keys', async () => {
    const output = gateway.output();
    assert.match(output, /upstream: v1 at http:\/\/127\.0\.0\.1:\d+ \(local sandbox upstream\)/);
    // Four demo keys and the one in the curl line: the upstream's keys stay in the config.
    assert.equal(output.match(/rk_[0-9a-f]{16}_/g)?.length, 5, output);
  });

  t.test('the whole chain answers, and the upstream runs the same profile (suspend is a profile B action)', async () => {
    const key = /acme\s+sandbox-all\s+(rk_\S+)/.exec(gateway.output())?.[1];
    assert.ok(key);
    assert.equal((await call(base, 'GET', '/v1/me', { key })).json().account.id, 'acme');
    const services = (await call(base, 'GET', '/v1/services?per_page=100', { key })).json().data;
    const active = services.find((service: { status: string }) => service.status === 'active');
    const suspend = await call(base, 'POST', `/v1/services/${active.id}/actions`, { key, body: { action: 'suspend' }, headers: { 'idempotency-key': 'v1-suspend-1' } });
    assert.equal(suspend.status, 200, suspend.text);
    assert.equal(suspend.json().service.status, 'suspended');
  });

  t.test('SIGTERM stops both gateways', async () => {
    assert.equal(await stop(gateway.process), 0);
  });
});

t.test('v1 passthrough, production start', async (t) => {
  t.test('names the upstream it forwards to, never a key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rg-v1-prod-'));
    const gateway = start({
      ...process.env,
      SANDBOX: '',
      PORT: '0',
      OPS_PORT: '0',
      HOST: '127.0.0.1',
      KEYS_FILE: join(dir, 'keys.json'),
      AUDIT_LOG_FILE: join(dir, 'audit.log'),
      KEY_PEPPER: 'process-test-pepper-0123456789abcdef0123',
      WEBHOOK_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
      V1_UPSTREAM_URL: 'https://panel.example.com/api/',
      V1_UPSTREAM_API_KEYS: 'acme=upstream-secret-key-1,beta=upstream-secret-key-2',
      REDIS_URL: '',
    });
    try {
      await waitFor(() => (gateway.output().includes('serving v1 on') ? true : undefined), 30_000);
      assert.match(gateway.output(), /upstream: v1 at https:\/\/panel\.example\.com\/api"/);
      assert.doesNotMatch(gateway.output(), /upstream-secret-key/);
      assert.equal(await stop(gateway.process), 0);
    } finally {
      if (gateway.process.exitCode === null) gateway.process.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
