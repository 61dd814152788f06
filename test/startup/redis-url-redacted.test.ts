/**
 * Redis unreachable at boot names REDIS_URL without its password, also a password
 * with characters a URL writes escaped (`@`, `[`, a space), or one in the query (ioredis reads
 * `?password=`). The line cut out the password as the URL parser writes it (`p%40ss`), which is not
 * the text of REDIS_URL (`p@ss`), and kept the query: either went out whole.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { sandboxEnv, unusedPort } from '../helpers/gateway-process.js';

/** Boots a gateway on REDIS_URL `url(port)` (a closed port); its exit status and output. */
async function bootUnreachable(t: Test, url: (port: number) => string): Promise<{ port: number; status: number | null; stderr: string; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'rg-redis-secret-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const port = await unusedPort();
  const env = sandboxEnv(dir, { WORKERS: '1', REDIS_URL: url(port) });
  delete env.CONFIG_FILE;
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { env, encoding: 'utf8', timeout: 90_000 });
  return { port, status: result.status, stderr: result.stderr, output: result.stdout + result.stderr };
}

t.test('a Redis password a URL escapes is not printed when Redis is unreachable', async (t) => {
  const { port, status, stderr, output } = await bootUnreachable(t, (port) => `redis://gw:hunter2@plan[B] 9f3@127.0.0.1:${port}/0`);
  assert.equal(status, 69, output);
  assert.match(stderr, new RegExp(`reseller-gateway: Redis unreachable: REDIS_URL \\(redis://gw:\\[redacted\\]@127\\.0\\.0\\.1:${port}/0\\) did not answer`));
  for (const part of ['hunter2', 'plan[B]', 'plan%5BB%5D']) assert.ok(!output.includes(part), `the password reached the output: ${part}`);
});

t.test('nor one given in the query, where ioredis reads it too', async (t) => {
  const { port, status, stderr, output } = await bootUnreachable(t, (port) => `redis://127.0.0.1:${port}/0?password=hunter2-in-query`);
  assert.equal(status, 69, output);
  assert.match(stderr, new RegExp(`reseller-gateway: Redis unreachable: REDIS_URL \\(redis://127\\.0\\.0\\.1:${port}/0\\?\\[redacted\\]\\) did not answer`));
  assert.ok(!output.includes('hunter2'), 'the password reached the output');
});
