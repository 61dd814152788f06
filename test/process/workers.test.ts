/**
 * WORKERS: the gateway as a node:cluster on one port (src/workers.ts). With a private Redis, two
 * workers both serve (each request's access line names its process), the primary's ops listener
 * aggregates their metrics, and SIGTERM drains every worker (a request in flight gets its answer)
 * before the primary exits 0. With the memory stores, more than one worker is refused at boot.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { call } from '../helpers/http.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';
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

function environment(dir: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SANDBOX: '1',
    PORT: '0',
    OPS_PORT: '0',
    KEYS_FILE: join(dir, 'keys.json'),
    AUDIT_LOG_FILE: join(dir, 'audit.log'),
    LOG_LEVEL: 'info',
    ...extra,
  };
  delete env.CONFIG_FILE;
  return env;
}

const ADMIN_TOKEN = `rgadm_${randomBytes(32).toString('base64url')}`;

t.test('WORKERS: several processes on one port', async (t) => {
  let dir: string;
  let redis: RedisServer;
  let server: ChildProcess;
  let output = '';
  let base: string;
  let ops: string;
  let key: string;
  let exited: Promise<number | null>;
  /** Requests sent to /v1/products by the first test. */
  let sent = 0;

  t.before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rg-workers-'));
    redis = await startRedisServer();
    // The sandbox upstream answers after 300 ms: long enough to have a request in flight at SIGTERM.
    const adminHash = `sha256:${createHash('sha256').update(ADMIN_TOKEN).digest('hex')}`;
    const env = environment(dir, {
      WORKERS: '2',
      REDIS_URL: redis.url,
      SANDBOX_UPSTREAM_LATENCY_MS: '300',
      ADMIN_TOKENS: JSON.stringify([{ name: 'panel', hash: adminHash, scopes: ['admin:keys', 'admin:read'] }]),
    });
    server = spawn(process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    exited = new Promise((resolve) => server.once('exit', (code) => resolve(code)));
    server.stdout?.on('data', (chunk) => (output += String(chunk)));
    server.stderr?.on('data', (chunk) => (output += String(chunk)));
    await waitFor(() => (output.includes('try: curl') ? true : undefined), 60_000, `the banner:\n${output}`);
    base = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] as string;
    ops = /ops \(metrics, probes\): (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] as string;
    key = /acme\s+sandbox-all\s+(rk_\S+)/.exec(output)?.[1] as string;
    assert.ok(base && ops && key, output);
    assert.match(output, /2 workers\)/, 'the banner names the workers');
  });
  t.teardown(async () => {
    if (server.exitCode === null) server.kill('SIGKILL');
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  t.test('both workers serve requests (each access line names its process)', async () => {
    // The banner comes once the first worker listens; on a loaded host the second may still be
    // starting, and until it listens every connection goes to the first. So requests go on, one
    // connection each, until lines from two processes are in (they leave in batches, at least once
    // a second); the metrics test below counts them all.
    const pidsSeen = () =>
      new Set(
        output
          .split('\n')
          .filter((line) => line.includes('"msg":"request completed"') && line.includes('"url":"/v1/products"'))
          .map((line) => (JSON.parse(line) as { pid: number }).pid),
      );
    let lastSent = 0;
    const pids = await waitFor(async () => {
      if (sent >= 12 && pidsSeen().size >= 2) return pidsSeen();
      // Past the first twelve, one a second: the key's sustained rate, so that its burst is left
      // for the tests below.
      if (sent >= 12 && Date.now() - lastSent < 1_000) return undefined;
      assert.equal(await getOnNewConnection(base, '/v1/products', key), 200);
      sent += 1;
      lastSent = Date.now();
      return undefined;
    }, 60_000, 'access lines from two processes');
    assert.ok(!pids.has(server.pid as number), 'the primary serves no request');
  });

  t.test('the primary\'s ops listener: every worker ready, their metrics summed', async () => {
    const ready = await call(ops, 'GET', '/readyz');
    assert.equal(ready.status, 200, ready.text);
    assert.deepEqual(ready.json().checks, { store: 'ok', upstream: 'ok', shutting_down: false });
    const metrics = await call(ops, 'GET', '/metrics');
    assert.match(metrics.text, new RegExp(`^gateway_http_requests_total\\{route="/v1/products",method="GET",status="200"\\} ${sent}$`, 'm'));
  });

  t.test("the primary's admin API: a key it issues serves on the workers at once, and its revocation is refused at once", async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const issued = await call(ops, 'POST', '/admin/v1/accounts/acme/keys', {
      headers: { ...admin, 'idempotency-key': 'workers-issue-1' },
      body: { name: 'cluster', scopes: ['read:products'] },
    });
    assert.equal(issued.status, 201, issued.text);
    const fresh = issued.json() as { id: string; key: string };
    // Every connection may land on either worker: both must know the key at once, then forget it at once.
    for (let index = 0; index < 6; index += 1) assert.equal(await getOnNewConnection(base, '/v1/products', fresh.key), 200);
    const revoked = await call(ops, 'POST', `/admin/v1/keys/${fresh.id}/revoke`, { headers: admin });
    assert.equal(revoked.status, 200, revoked.text);
    for (let index = 0; index < 6; index += 1) assert.equal(await getOnNewConnection(base, '/v1/products', fresh.key), 401);
  });

  t.test('a worker that stops answering fails /livez until it answers again', async (t) => {
    // A worker whose event loop stops kept /readyz at 503 for good while the primary answered /livez
    // 200: no orchestrator replaced the instance, and the stuck worker kept its share of connections.
    assert.equal((await call(ops, 'GET', '/livez')).status, 200);
    const stopped = output
      .split('\n')
      .filter((line) => line.includes('"msg":"request completed"'))
      .map((line) => (JSON.parse(line) as { pid: number }).pid)
      .find((pid) => pid !== server.pid) as number;
    process.kill(stopped, 'SIGSTOP');
    let resumed = false;
    t.teardown(() => {
      if (!resumed) process.kill(stopped, 'SIGCONT');
    });
    const stuck = await call(ops, 'GET', '/livez');
    assert.equal(stuck.status, 503, stuck.text);
    assert.deepEqual(stuck.json(), { status: 'worker_unresponsive' });
    process.kill(stopped, 'SIGCONT');
    resumed = true;
    assert.equal((await call(ops, 'GET', '/livez')).status, 200, 'alive again once it answers');
  });

  t.test('a worker that dies is replaced, and counts for nothing at a later shutdown', async () => {
    const served = output
      .split('\n')
      .filter((line) => line.includes('"msg":"request completed"'))
      .map((line) => (JSON.parse(line) as { pid: number }).pid);
    const victim = served.find((pid) => pid !== server.pid) as number;
    process.kill(victim, 'SIGKILL');
    const line = await waitFor(() => output.split('\n').find((each) => each.includes('worker exited; starting another')), 10_000, 'the replacement');
    // One pid per line (the primary's, from the logger): the worker's under a name of its own.
    assert.deepEqual(JSON.parse(line), { ...JSON.parse(line), pid: server.pid, worker_pid: victim, signal: 'SIGKILL' });
    assert.equal(line.match(/"pid":/g)?.length, 1, line);
    await waitFor(async () => ((await call(ops, 'GET', '/readyz')).status === 200 ? true : undefined), 30_000, 'every worker ready again');
    for (let index = 0; index < 4; index += 1) assert.equal(await getOnNewConnection(base, '/v1/products', key), 200);
  });

  t.test('SIGTERM drains every worker: the request in flight is answered, then the primary exits 0', async () => {
    const inFlight = call(base, 'GET', '/v1/me', { key });
    await new Promise((resolve) => setTimeout(resolve, 100));
    server.kill('SIGTERM');
    const response = await inFlight;
    assert.equal(response.status, 200, response.text);
    assert.equal(response.json().account.id, 'acme');
    assert.equal(await exited, 0, output);
  });
});

t.test('WORKERS above 1 with the memory stores: refused at boot, naming what to set', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-workers-memory-'));
  try {
    const env = environment(dir, { WORKERS: '2' });
    delete env.REDIS_URL;
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { env, encoding: 'utf8', timeout: 60_000 });
    assert.equal(result.status, 78, result.stdout + result.stderr);
    assert.match(result.stderr, /workers: 2 workers need the Redis stores \(set REDIS_URL or REDIS_CLUSTER_NODES\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t.test('WORKERS: a signal during boot drains what started; workers that cannot start stop the primary', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-workers-boot-'));
  const redis = await startRedisServer();
  t.teardown(async () => {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const start = (extra: Record<string, string>) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { env: environment(dir, { WORKERS: '2', REDIS_URL: redis.url, ...extra }), stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout?.on('data', (chunk) => (text += String(chunk)));
    child.stderr?.on('data', (chunk) => (text += String(chunk)));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    t.teardown(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    return { child, exited, output: () => text };
  };

  t.test('SIGTERM before any worker listens: the primary exits 0, its workers with it', async () => {
    const { child, exited, output } = start({});
    // The workers are forked (the primary has children) but still loading: none listens yet.
    const children = await waitFor(() => {
      const found = spawnSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' }).stdout.trim();
      return found ? found.split('\n').map(Number) : undefined;
    }, 30_000, 'the forked workers');
    assert.doesNotMatch(output(), /workers serving v1/);
    child.kill('SIGTERM');
    assert.equal(await exited, 0, output());
    assert.match(output(), /shutting down: draining the workers/);
    for (const pid of children) assert.throws(() => process.kill(pid, 0), `worker ${pid} is gone`);
  });

  t.test('a port taken: the workers cannot listen, the primary says so and exits 1 (as one process would)', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    t.teardown(() => blocker.close());
    const { exited, output } = start({ PORT: String((blocker.address() as AddressInfo).port), HOST: '127.0.0.1' });
    assert.equal(await exited, 1, output());
    assert.match(output(), /EADDRINUSE/);
    assert.match(output(), /workers failed to start; exiting/);
  });
});
