/**
 * WORKERS=2: the primary's /metrics while a worker is still starting (a replacement after a
 * crash). The starting worker has counted nothing yet; the scrape must not wait on it and fail
 * (prom-client's cluster aggregation asked every connected worker and gave up after 5 s with a
 * 500, so every scrape during a worker's boot lost all series of the instance).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { call } from '../helpers/http.js';
import { startRedisServer } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const childrenOf = (pid: number): number[] =>
  spawnSync('pgrep', ['-P', String(pid), '-f', 'bin/gateway'], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean).map(Number);

t.test('the primary scrapes its workers while one of them is still starting', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-review-workers-'));
  const redis = await startRedisServer();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SANDBOX: '1',
    PORT: '0',
    OPS_PORT: '0',
    WORKERS: '2',
    REDIS_URL: redis.url,
    KEYS_FILE: join(dir, 'keys.json'),
    AUDIT_LOG_FILE: join(dir, 'audit.log'),
    LOG_LEVEL: 'info',
  };
  delete env.CONFIG_FILE;
  const server = spawn(process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  server.stdout?.on('data', (chunk) => (output += String(chunk)));
  server.stderr?.on('data', (chunk) => (output += String(chunk)));
  t.teardown(async () => {
    if (server.exitCode === null) server.kill('SIGKILL');
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  await waitFor(() => (output.includes('try: curl') ? true : undefined), 60_000, `the banner:\n${output}`);
  const ops = /ops \(metrics, probes\): (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] as string;
  await waitFor(async () => ((await call(ops, 'GET', '/readyz')).status === 200 ? true : undefined), 30_000, 'both workers ready');
  assert.equal((await call(ops, 'GET', '/metrics')).status, 200);

  const before = childrenOf(server.pid as number);
  process.kill(before[0] as number, 'SIGKILL');
  // The replacement is forked a second later, and takes a while to load.
  await waitFor(() => (childrenOf(server.pid as number).some((pid) => !before.includes(pid)) ? true : undefined), 10_000, 'the replacement');
  const started = Date.now();
  const metrics = await call(ops, 'GET', '/metrics');
  assert.equal(metrics.status, 200, metrics.text);
  assert.ok(Date.now() - started < 2_000, `answered in ${Date.now() - started} ms`);
  assert.match(metrics.text, /^gateway_process_cpu_seconds_total \d/m, 'the serving worker is counted');
  assert.notEqual((await call(ops, 'GET', '/readyz')).status, 200, 'the replacement was still starting');
});
