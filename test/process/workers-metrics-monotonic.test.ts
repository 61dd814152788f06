/**
 * WORKERS=2: a worker that dies takes its counts with it, but the primary's /metrics is one target
 * to Prometheus. If the sum of the workers' counters drops (the dead worker's share left out),
 * Prometheus reads a counter reset and counts the whole remaining value as new: `rate()` of every
 * counter (requests, 5xx, upstream failures) spikes by the survivor's lifetime total, and the
 * alerts built on them fire on a crash. The summed counters must never go down while the primary
 * runs (src/workers.ts already fails a scrape rather than leave out a silent worker for this reason).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { call } from '../helpers/http.js';
import { startRedisServer } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

/** One request on a connection of its own (the cluster hands out connections, not requests). */
function getOnNewConnection(base: string, path: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { agent: false, headers: { authorization: `Bearer ${key}` } }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

const PRODUCTS = /^gateway_http_requests_total\{route="\/v1\/products",method="GET",status="200"\} (\d+)$/m;
const CPU = /^gateway_process_cpu_seconds_total (\S+)$/m;

t.test("a worker's death does not make the primary's summed counters go down", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-review-monotonic-'));
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
  const base = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] as string;
  const ops = /ops \(metrics, probes\): (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] as string;
  const key = /acme\s+sandbox-all\s+(rk_\S+)/.exec(output)?.[1] as string;
  await waitFor(async () => ((await call(ops, 'GET', '/readyz')).status === 200 ? true : undefined), 30_000, 'both workers ready');

  // Requests on new connections until both workers have answered some (their access lines name them).
  const servedBy = () =>
    output
      .split('\n')
      .filter((line) => line.includes('"msg":"request completed"') && line.includes('"url":"/v1/products"'))
      .map((line) => (JSON.parse(line) as { pid: number }).pid);
  let sent = 0;
  await waitFor(async () => {
    if (sent >= 6 && new Set(servedBy()).size >= 2) return true;
    assert.equal(await getOnNewConnection(base, '/v1/products', key), 200);
    sent += 1;
    await new Promise((resolve) => setTimeout(resolve, sent > 10 ? 1_000 : 0));
    return undefined;
  }, 60_000, 'requests served by both workers');

  const scrape = async () => {
    const metrics = await call(ops, 'GET', '/metrics');
    assert.equal(metrics.status, 200, metrics.text);
    return { products: Number(PRODUCTS.exec(metrics.text)?.[1] ?? 0), cpu: Number(CPU.exec(metrics.text)?.[1] ?? 0) };
  };
  const before = await scrape();
  assert.equal(before.products, sent);

  process.kill(servedBy()[0] as number, 'SIGKILL');
  await waitFor(() => (output.includes('worker exited; starting another') ? true : undefined), 10_000, 'the death noticed');
  const after = await scrape();
  assert.ok(after.products >= before.products, `requests counted went from ${before.products} down to ${after.products}`);
  assert.ok(after.cpu >= before.cpu, `CPU seconds went from ${before.cpu} down to ${after.cpu}`);

  // With the replacement serving, the survivors' and the replacement's counts add to the dead one's.
  await waitFor(async () => ((await call(ops, 'GET', '/readyz')).status === 200 ? true : undefined), 30_000, 'the replacement ready');
  assert.equal(await getOnNewConnection(base, '/v1/products', key), 200);
  const later = await scrape();
  assert.ok(later.products >= after.products + 1, `${after.products} then ${later.products}`);
  assert.ok(later.cpu >= after.cpu, `CPU seconds went from ${after.cpu} down to ${later.cpu}`);
});
