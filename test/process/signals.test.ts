/**
 * A second SIGTERM/SIGINT during a graceful shutdown forces the exit at once (logged, exit 1); it was
 * ignored, and the process went on draining (here a minute of ops.unreadyDelayMs). Two signals that
 * arrive together are one stop request (a terminal's Ctrl-C under `npm start` reaches the gateway
 * from the terminal and again from npm, which forwards it): they still drain and exit 0.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { startRedisServer } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';
import { childPids, exitWithin, startGateway } from '../helpers/gateway-process.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('one process: a later second SIGTERM exits 1 at once, logged', async (t) => {
  const gateway = await startGateway(t, { ops: { unreadyDelayMs: 60_000 } });
  gateway.child.kill('SIGTERM');
  await waitFor(() => (gateway.output().includes('"msg":"shutting down"') ? true : undefined), 30_000, 'the drain');
  await pause(1_500);
  gateway.child.kill('SIGINT');
  assert.equal(await exitWithin(gateway.exited, 20_000), 1, gateway.output());
  assert.match(gateway.output(), /"signal":"SIGINT".*"msg":"second signal during shutdown: exiting now"/);
});

t.test('one process: two signals at once are one stop request, drained to exit 0', async (t) => {
  const gateway = await startGateway(t, { ops: { unreadyDelayMs: 1_000 } });
  gateway.child.kill('SIGINT');
  gateway.child.kill('SIGINT');
  assert.equal(await gateway.exited, 0, gateway.output());
  assert.doesNotMatch(gateway.output(), /second signal/);
});

t.test('WORKERS=2: a later second SIGTERM stops the workers and the primary exits 1 at once', async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const gateway = await startGateway(t, { ops: { unreadyDelayMs: 60_000 } }, { WORKERS: '2', REDIS_URL: redis.url });
  const primary = gateway.child.pid as number;
  await waitFor(() => (childPids(primary).length === 2 ? true : undefined), 30_000, 'two workers');
  const workers = childPids(primary);
  gateway.child.kill('SIGTERM');
  await waitFor(() => (gateway.output().includes('shutting down: draining the workers') ? true : undefined), 30_000, 'the drain');
  await pause(1_500);
  gateway.child.kill('SIGTERM');
  assert.equal(await exitWithin(gateway.exited, 20_000), 1, gateway.output());
  assert.match(gateway.output(), /"signal":"SIGTERM".*"msg":"second signal during shutdown: exiting now"/);
  // Killed, not left to drain their minute (a zombie not reaped yet has ended too).
  const alive = (pid: number) => {
    try {
      return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
    } catch {
      return false;
    }
  };
  await waitFor(() => (workers.some(alive) ? undefined : true), 10_000, 'the workers to be gone');
});
