/**
 * Redis unreachable at boot (REDIS_URL naming a closed port): the gateway waits its bounded connect
 * time, then stops with EX_UNAVAILABLE (69) and one line naming the setting, with no stack trace and
 * no password. It was exit 1 with "failed to start" and a stack; with WORKERS=2 three rounds of
 * workers started and died first.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { sandboxEnv, unusedPort } from '../helpers/gateway-process.js';

function boot(dir: string, extra: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const env = sandboxEnv(dir, extra);
  delete env.CONFIG_FILE;
  return spawnSync(process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { env, encoding: 'utf8', timeout: 90_000 });
}

for (const workers of ['1', '2']) {
  t.test(`WORKERS=${workers}: exit 69 and one line naming REDIS_URL, without its password`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'rg-redis-boot-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const port = await unusedPort();
    const result = boot(dir, { WORKERS: workers, REDIS_URL: `redis://:hunter2secret@127.0.0.1:${port}/0` });
    const output = result.stdout + result.stderr;
    assert.equal(result.status, 69, output);
    const lines = result.stderr.split('\n').filter((line) => line.startsWith('reseller-gateway: Redis'));
    assert.equal(lines.length, 1, result.stderr);
    assert.match(lines[0] as string, new RegExp(`^reseller-gateway: Redis unreachable: REDIS_URL \\(redis://:\\[redacted\\]@127\\.0\\.0\\.1:${port}/0\\) did not answer within \\d+ ms`));
    assert.doesNotMatch(output, /\n\s+at /, 'no stack trace');
    assert.doesNotMatch(output, /hunter2secret/, 'no password');
    assert.doesNotMatch(output, /worker exited; starting another/, 'not retried worker by worker');
  });
}
