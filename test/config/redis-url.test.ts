/**
 * A REDIS_URL that is not a URL at all (a password with an unencoded '#', '/' or '?', a space in
 * the host) is a config error naming `redisUrl`, never quoting it: zod 4 runs a refine even after
 * `.url()` failed, and a `new URL` there threw ERR_INVALID_URL, whose `input` is the whole URL,
 * password included (the key CLI printed it uncaught; the gateway exited 1 with a stack trace).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ConfigError } from '../../src/config.js';
import { loadConfig } from '../../src/load-config.js';
import { BACKENDS } from '../../mappings/index.js';

const PASSWORD = 's3cr#t-review-pw';
/** A generated password pasted unencoded: the '#' ends the authority, so this is no URL. */
const BAD_URL = `redis://:${PASSWORD}@127.0.0.1:6399`;

t.test('REDIS_URL that is not a URL: a ConfigError naming redisUrl, never the password', async () => {
  for (const value of [BAD_URL, 'redis://:pw@redis host:6379', 'not a url']) {
    assert.throws(
      () => loadConfig(BACKENDS, { REDIS_URL: value }),
      (error: Error) => {
        assert.ok(error instanceof ConfigError, `${value}: ${String(error)}`);
        assert.match(error.message, /- redisUrl/, value);
        assert.ok(!error.message.includes(PASSWORD), error.message);
        return true;
      },
      value,
    );
  }
});

t.test('the key CLI exits 78 and does not print the REDIS_URL password', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-review-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: BAD_URL, KEYS_FILE: join(dir, 'keys.json') };
  delete env.CONFIG_FILE;
  delete env.REDIS_CLUSTER_NODES;
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'bin/reseller-keys.ts', 'list', '--json'], { env, encoding: 'utf8', timeout: 30_000 });
  assert.ok(!`${result.stdout}${result.stderr}`.includes(PASSWORD), `the password was printed: ${result.stderr}`);
  assert.equal(result.status, 78, result.stderr);
});

t.test('the gateway stops with exit 78 and a message, not a stack trace', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-review-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = {
    ...process.env, SANDBOX: '1', PORT: '0', OPS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn',
    KEYS_FILE: join(dir, 'keys.json'), AUDIT_LOG_FILE: join(dir, 'audit.log'), ADMIN_AUDIT_LOG_FILE: join(dir, 'admin.log'),
    REDIS_URL: BAD_URL,
  };
  delete env.CONFIG_FILE;
  delete env.REDIS_CLUSTER_NODES;
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { env, encoding: 'utf8', timeout: 60_000 });
  assert.equal(result.status, 78, result.stderr);
  assert.match(result.stderr, /invalid configuration:\n {2}- redisUrl/);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'a stack trace');
  assert.ok(!result.stderr.includes(PASSWORD));
});
