/**
 * WORKERS=2 (src/workers.ts, README "All cores"):
 * - the workers take their config over IPC, "no secret in its environment": yet cluster.fork()
 *   handed every worker the primary's whole environment (KEY_PEPPER, WHMCS_SECRET, REDIS_URL…).
 * - a terminal's Ctrl-C (SIGINT to the whole process group) while the workers are still starting
 *   must end in exit 0 as SIGTERM does ("also when the signal comes while the workers are still
 *   starting"); the workers, killed by the SIGINT before their handler, made it exit 1.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { call } from '../helpers/http.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const PEPPER = 'review-pepper-0123456789-0123456789-abcdef';

function childrenOf(pid: number): number[] | undefined {
  const found = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout.trim();
  return found ? found.split('\n').map(Number) : undefined;
}

t.test('WORKERS=2', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-review-workers-'));
  let redis: RedisServer;
  const started: ChildProcess[] = [];
  t.before(async () => {
    redis = await startRedisServer();
  });
  t.teardown(async () => {
    for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const start = () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      SANDBOX: '1',
      WORKERS: '2',
      REDIS_URL: redis.url,
      KEY_PEPPER: PEPPER,
      PORT: '0',
      OPS_PORT: '0',
      KEYS_FILE: join(dir, 'keys.json'),
      AUDIT_LOG_FILE: join(dir, 'audit.log'),
      ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'),
      LOG_LEVEL: 'info',
    };
    delete env.CONFIG_FILE;
    // A process group of its own, as a shell gives a command it runs: the group is what Ctrl-C signals.
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    started.push(child);
    let text = '';
    child.stdout?.on('data', (chunk) => (text += String(chunk)));
    child.stderr?.on('data', (chunk) => (text += String(chunk)));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, exited, output: () => text };
  };

  t.test('the workers serve without the config variables (secrets) in their environment', async () => {
    const { child, exited, output } = start();
    await waitFor(() => (output().includes('try: curl') ? true : undefined), 60_000, `the banner:\n${output()}`);
    const base = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(output())?.[1] as string;
    const key = /acme\s+sandbox-all\s+(rk_\S+)/.exec(output())?.[1] as string;
    assert.equal((await call(base, 'GET', '/v1/me', { key })).status, 200, 'the workers serve with the config sent over IPC');
    const workers = childrenOf(child.pid as number) ?? [];
    assert.ok(workers.length >= 2, output());
    for (const pid of workers) {
      const environment = readFileSync(`/proc/${pid}/environ`, 'utf8');
      assert.doesNotMatch(environment, new RegExp(PEPPER), `worker ${pid}: KEY_PEPPER`);
      assert.doesNotMatch(environment, /(^|\0)REDIS_URL=/, `worker ${pid}: REDIS_URL`);
    }
    child.kill('SIGTERM');
    assert.equal(await exited, 0, output());
  });

  t.test('Ctrl-C (SIGINT to the process group) while the workers are still starting: exit 0', async () => {
    const { child, exited, output } = start();
    await waitFor(() => childrenOf(child.pid as number), 30_000, 'the forked workers');
    assert.doesNotMatch(output(), /workers serving v1/);
    process.kill(-(child.pid as number), 'SIGINT');
    assert.equal(await exited, 0, output());
  });
});
