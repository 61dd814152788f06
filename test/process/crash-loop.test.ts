/**
 * WORKERS=2, serving: workers that keep dying are replaced after a growing delay, and past four
 * rounds of deaths (each less than a minute after the last) the primary stops with exit 1 and a
 * line saying so, for the orchestrator to see. It replaced them every second, forever.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { startRedisServer } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';
import { childPids, startGateway } from '../helpers/gateway-process.js';

t.test('a crash loop after serving stops the primary with 1', async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const gateway = await startGateway(t, {}, { WORKERS: '2', REDIS_URL: redis.url });
  const primary = gateway.child.pid as number;
  let exitCode: number | null | undefined;
  void gateway.exited.then((code) => (exitCode = code));
  const killed = new Set<number>();
  // Every worker that appears is killed, as a worker that crashes on start would die, until the primary gives up.
  await waitFor(() => {
    if (exitCode !== undefined) return true;
    for (const pid of childPids(primary)) {
      if (killed.has(pid)) continue;
      killed.add(pid);
      process.kill(pid, 'SIGKILL');
    }
    return undefined;
  }, 90_000, 'the primary to give up', 100);
  assert.equal(exitCode, 1, gateway.output());
  assert.match(gateway.output(), /"msg":"workers keep dying; exiting"/);
  const delays = gateway
    .output()
    .split('\n')
    .filter((line) => line.includes('worker exited; starting another'))
    .map((line) => (JSON.parse(line) as { respawn_in_ms: number }).respawn_in_ms);
  assert.ok(delays.length >= 2 && (delays.at(-1) as number) > (delays[0] as number), `the delay grows: ${delays.join(', ')}`);
});
