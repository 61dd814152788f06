/**
 * With WORKERS=2 the primary logged "2 workers serving v1 on …" when the first worker
 * listened (cluster.once('listening')), while the second could still be loading: an operator (or a
 * script waiting for that line) took the cluster for complete. The line comes once every worker
 * listens. Stand-in workers (test/helpers/cluster-primary-standin.ts) make the order certain.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { unusedPort } from '../helpers/gateway-process.js';
import { startRedisServer } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

t.test('the primary says the workers serve once all of them listen', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-workers-serving-'));
  const redis = await startRedisServer();
  t.teardown(async () => {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const gate = join(dir, 'gate');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    REDIS_URL: redis.url,
    KEY_PEPPER: randomBytes(32).toString('base64url'),
    WEBHOOK_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    OPS_PORT: '0',
    LOG_LEVEL: 'info',
    KEYS_FILE: join(dir, 'keys.json'),
    AUDIT_LOG_FILE: join(dir, 'audit.log'),
    STAND_IN_PORT: String(await unusedPort()),
    GATE_FILE: gate,
    WHMCS_URL: 'http://127.0.0.1:9/includes/api.php',
    WHMCS_IDENTIFIER: 'review-identifier',
    WHMCS_SECRET: 'review-secret',
  };
  delete env.CONFIG_FILE;
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/cluster-primary-standin.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += String(chunk)));
  child.stderr?.on('data', (chunk) => (output += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });

  await waitFor(() => (output.includes('worker 1 listening') ? true : undefined), 60_000, `the first worker listening:\n${output}`);
  // What the primary does on the first worker's listening event it does within this.
  await waitFor(() => (output.includes('ops listener') ? true : undefined), 30_000, `the ops listener:\n${output}`);
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.doesNotMatch(output, /workers serving/, 'one worker of two listens: not yet "2 workers serving"');

  writeFileSync(gate, '');
  await waitFor(() => (/2 workers serving v1 on http:\/\/127\.0\.0\.1:\d+/.test(output) ? true : undefined), 30_000, `the serving line:\n${output}`);
  assert.match(output, /worker 2 listening/);
  child.kill('SIGTERM');
  assert.equal(await exited, 0, output);
});
