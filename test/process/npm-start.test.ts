/**
 * `npm start` on a checkout (scripts/start.mjs): it compiles when dist/ is older than the sources
 * and not again when nothing changed, and it runs the sandbox with demo keys on loopback, where the
 * compiled entry alone would stop for want of an upstream (test/process/container.test.ts).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { call } from '../helpers/http.js';

let dir: string;
t.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'rg-npm-start-'));
});
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the start script until the sandbox banner is complete, checks a key, and stops it. */
async function startOnce(): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', OPS_PORT: '0', HOST: '127.0.0.1', KEYS_FILE: join(dir, 'keys.json'), AUDIT_LOG_FILE: join(dir, 'audit.log'), LOG_LEVEL: 'warn' };
  delete env.SANDBOX;
  delete env.REDIS_URL;
  const child = spawn(process.execPath, ['scripts/start.mjs'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += String(chunk)));
  child.stderr.on('data', (chunk) => (output += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const deadline = Date.now() + 240_000;
    while (!/try: curl/.test(output)) {
      // Killed by a signal, exitCode stays null: signalCode says it ended.
      assert.equal(child.exitCode ?? child.signalCode, null, `npm start ended before its banner:\n${output}`);
      assert.ok(Date.now() < deadline, `no banner:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const base = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] as string;
    const key = /acme\s+sandbox-all\s+(rk_\S+)/.exec(output)?.[1];
    assert.equal((await call(base, 'GET', '/v1/me', { key })).status, 200);
  } finally {
    child.kill('SIGTERM');
    assert.equal(await exited, 0, output);
  }
}

t.test('builds when needed, not again when nothing changed, and serves the sandbox with keys on loopback', async () => {
  await startOnce();
  const built = statSync('dist/.build-stamp').mtimeMs;
  await startOnce();
  assert.equal(statSync('dist/.build-stamp').mtimeMs, built, 'the second start did not build');
});
