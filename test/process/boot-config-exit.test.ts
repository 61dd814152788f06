/**
 * A bad config stops the boot with EX_CONFIG (78) and names the field (README "Configuration"),
 * also for the one setting only the built app checks: idempotency.settleMs shorter than the
 * backend's write timeout ("checked at boot", src/config.ts). It was exit 1 with a stack trace, and
 * with WORKERS=2 three rounds of workers started and died before the primary gave up with 1.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startRedisServer } from '../helpers/redis.js';

function boot(dir: string, extra: Record<string, string>): ReturnType<typeof spawnSync> & { stderr: string; stdout: string } {
  writeFileSync(join(dir, 'gateway.json'), JSON.stringify({ idempotency: { settleMs: 1_000 } }));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SANDBOX: '1',
    CONFIG_FILE: join(dir, 'gateway.json'),
    PORT: '0',
    OPS_PORT: '0',
    KEYS_FILE: join(dir, 'keys.json'),
    AUDIT_LOG_FILE: join(dir, 'audit.log'),
    ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'),
    LOG_LEVEL: 'warn',
    ...extra,
  };
  if (!extra.REDIS_URL) delete env.REDIS_URL;
  return spawnSync(process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { env, encoding: 'utf8', timeout: 60_000 });
}

t.test('idempotency.settleMs below the write timeout: exit 78 naming the field, no stack trace', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-review-settle-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const result = boot(dir, {});
  assert.equal(result.status, 78, result.stderr);
  assert.match(result.stderr, /invalid configuration:\n {2}- idempotency\.settleMs: must not be shorter than the backend's write timeout/);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
});

t.test('the same with WORKERS=2: the primary stops with 78 at the first worker that refuses it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-review-settle-workers-'));
  const redis = await startRedisServer();
  t.teardown(async () => {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const result = boot(dir, { WORKERS: '2', REDIS_URL: redis.url, LOG_LEVEL: 'info' });
  assert.equal(result.status, 78, result.stdout + result.stderr);
  assert.match(result.stderr, /- idempotency\.settleMs: must not be shorter/);
  assert.doesNotMatch(result.stdout, /worker exited; starting another/, 'not retried: a config error does not mend');
});
