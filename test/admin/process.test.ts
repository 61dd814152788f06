/**
 * The admin API in the real process (bin/gateway.ts, sandbox): configured by ADMIN_TOKENS, served
 * on the ops port and not on the public one, its calls in the admin audit file.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { mintAdminToken } from '../../src/admin/tokens.js';
import { call } from '../helpers/http.js';

t.test('admin API of the process', async (t) => {
  let dir: string;
  let server: ChildProcess;
  let output = '';
  let base: string;
  let ops: string;
  const panel = mintAdminToken('panel', ['admin:accounts', 'admin:keys', 'admin:read']);

  t.before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rg-admin-'));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      SANDBOX: '1',
      PORT: '0',
      OPS_PORT: '0',
      KEYS_FILE: join(dir, 'keys.json'),
      AUDIT_LOG_FILE: join(dir, 'audit.log'),
      ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'),
      ADMIN_TOKENS: JSON.stringify([panel.entry]),
      LOG_LEVEL: 'info',
    };
    delete env.REDIS_URL;
    server = spawn(process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout?.on('data', (chunk) => (output += String(chunk)));
    server.stderr?.on('data', (chunk) => (output += String(chunk)));
    const deadline = Date.now() + 30_000;
    while (!output.includes('try: curl') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    base = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] as string;
    ops = /ops \(metrics, probes\): (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] as string;
    assert.ok(base && ops, output);
  });
  t.teardown(() => {
    if (server.exitCode === null) server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  t.test('creates an account and a key on the ops port that serve on the public port; none of it on the public port', async () => {
    const authorization = { authorization: `Bearer ${panel.token}` };
    assert.equal((await call(base, 'GET', '/admin/v1/accounts', { headers: authorization })).status, 404);
    const created = await call(ops, 'POST', '/admin/v1/accounts', { headers: authorization, body: { id: 'proc', name: 'Process Test', upstream_id: '3' } });
    assert.equal(created.status, 201, created.text);
    const issued = await call(ops, 'POST', '/admin/v1/accounts/proc/keys', {
      headers: { ...authorization, 'idempotency-key': 'proc-1' },
      body: { name: 'panel-issued', scopes: ['read:services'] },
    });
    assert.equal(issued.status, 201, issued.text);
    const key = issued.json().key as string;
    assert.equal((await call(base, 'GET', '/v1/services', { key })).status, 200);
    assert.equal((await call(ops, 'POST', `/admin/v1/keys/${issued.json().id}/revoke`, { headers: authorization })).status, 200);
    assert.equal((await call(base, 'GET', '/v1/services', { key })).status, 401);
    assert.equal((await call(ops, 'GET', '/admin/v1/accounts', { headers: { authorization: 'Bearer nope' } })).status, 401);

    const lines = readFileSync(join(dir, 'admin-audit.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(
      lines.map((line) => [line.token, line.operation, line.status]),
      [['panel', 'createAccount', 201], ['panel', 'issueKey', 201], ['panel', 'revokeKey', 200], [null, 'listAccounts', 401]],
    );
    const file = readFileSync(join(dir, 'admin-audit.log'), 'utf8');
    assert.ok(!file.includes(panel.token) && !file.includes(key.slice(-20)));
    // Log lines leave in batches, at least once a second: wait for the start-up line before reading them all.
    const deadline = Date.now() + 10_000;
    while (!/admin API on the ops listener/.test(output) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    assert.ok(!output.includes(panel.token) && !output.includes(key.slice(-20)), 'nor in the process output');
    assert.match(output, /admin API on the ops listener under \/admin\/v1/);
  });
});
