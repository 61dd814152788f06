/**
 * WORKERS=2: the primary's own stores (the admin API's) say why they cannot reconnect, as the
 * workers' do (`Redis connection error`, README "When Redis is down"). Only the workers' stores did:
 * the primary's admin API failed with nothing in the log from the process that served it.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { startRedisServer } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';
import { startGateway } from '../helpers/gateway-process.js';

t.test("the primary logs its stores' connection errors", async (t) => {
  const redis = await startRedisServer();
  let stopped = false;
  t.teardown(() => (stopped ? undefined : redis.stop()));
  const gateway = await startGateway(t, {}, { WORKERS: '2', REDIS_URL: redis.url });
  const primary = gateway.child.pid as number;
  await redis.stop();
  stopped = true;
  const fromPrimary = () =>
    gateway
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { pid: number; msg: string; error?: string })
      .find((line) => line.pid === primary && line.msg === 'Redis connection error');
  // The workers' lines come first (they say it too): the primary's, with its pid, within the same reconnections.
  await waitFor(() => (gateway.output().includes('"msg":"Redis connection error"') ? true : undefined), 30_000, "the workers' line");
  const line = await waitFor(fromPrimary, 15_000, "the primary's line").catch(() => undefined);
  assert.ok(line, `a line from the primary (pid ${primary}):\n${gateway.output()}`);
  assert.match(line.error ?? '', /ECONNREFUSED|ECONNRESET|Connection is closed/);
});
