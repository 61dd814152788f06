/**
 * The ops listener of the real process: probes and metrics on their own (loopback) port, none of
 * them on the public one, and /readyz unready from SIGTERM on, while the app still serves, until
 * the process exits.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { call } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';

t.test('ops listener of the process', async (t) => {
  let dir: string;
  let server: ChildProcess;
  let output = '';
  let base: string;
  let ops: string;
  let key: string;

  t.before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rg-ops-'));
    // The sandbox config, with a window between unready and the drain wide enough to look at.
    const config = { ...JSON.parse(readFileSync('config/gateway.json', 'utf8')), ops: { unreadyDelayMs: 3_000 } };
    writeFileSync(join(dir, 'gateway.json'), JSON.stringify(config));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      CONFIG_FILE: join(dir, 'gateway.json'),
      SANDBOX: '1',
      PORT: '0',
      OPS_PORT: '0',
      KEYS_FILE: join(dir, 'keys.json'),
      AUDIT_LOG_FILE: join(dir, 'audit.log'),
      LOG_LEVEL: 'warn',
    };
    delete env.REDIS_URL;
    server = spawn(process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout?.on('data', (chunk) => (output += String(chunk)));
    server.stderr?.on('data', (chunk) => (output += String(chunk)));
    await waitFor(async () => (output.includes('try: curl') ? true : undefined), 30_000);
    base = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] as string;
    ops = /ops \(metrics, probes\): (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] as string;
    key = /acme\s+sandbox-all\s+(rk_\S+)/.exec(output)?.[1] as string;
    assert.ok(base && ops && key, output);
  });
  t.teardown(() => {
    if (server.exitCode === null) server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  t.test('serves probes and metrics on the ops port only', async () => {
    assert.notEqual(ops, base);
    assert.equal((await call(ops, 'GET', '/livez')).status, 200);
    const ready = await call(ops, 'GET', '/readyz');
    assert.equal(ready.status, 200, ready.text);
    assert.deepEqual(ready.json(), { status: 'ready', checks: { store: 'ok', upstream: 'ok', shutting_down: false } });
    assert.equal((await call(base, 'GET', '/v1/me', { key })).status, 200);
    const metrics = await call(ops, 'GET', '/metrics');
    assert.match(metrics.text, /^gateway_http_requests_total\{route="\/v1\/me",method="GET",status="200"\} 1$/m);
    for (const path of ['/metrics', '/livez', '/readyz']) assert.equal((await call(base, 'GET', path)).status, 404, path);
  });

  t.test('answers unready from SIGTERM on, while the app still serves, until the process exits', async () => {
    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    server.kill('SIGTERM');
    const unready = await waitFor(async () => {
      const response = await call(ops, 'GET', '/readyz');
      return response.status === 503 ? response : undefined;
    }, 10_000);
    assert.deepEqual(unready.json(), { status: 'unready', checks: { store: 'unchecked', upstream: 'unchecked', shutting_down: true } });
    assert.equal((await call(ops, 'GET', '/livez')).status, 200, 'alive while it drains');
    assert.equal((await call(base, 'GET', '/v1/me', { key })).status, 200, 'still served before the drain');
    assert.equal(await exited, 0);
  });
});
