/**
 * Settings the boot-time validation checks itself rather than leaving them to fail later without
 * naming the field (TRUSTED_PROXIES, REDIS_CLUSTER_NODES, REDIS_URL, WORKERS), and values whose
 * text is never quoted in the error (a bare base64 key in V1_UPSTREAM_API_KEYS holds '='; a
 * REDIS_URL holds its password).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ConfigError, parseConfig } from '../../src/config.js';
import { loadConfig } from '../../src/load-config.js';
import { BACKENDS } from '../../mappings/index.js';

const TSX = ['--import', 'tsx'];
const ENV = { KEY_PEPPER: 'review-pepper-0123456789abcdef0123456789', WEBHOOK_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') };

t.test('V1_UPSTREAM_API_KEYS: a bare key is never quoted, also when it holds "=" (base64 padding)', async () => {
  // base64 of 20 bytes (one '=' of padding): an operator who forgot the `upstreamId=` in front of it.
  const bare = Buffer.from('secret-upstream-key!').toString('base64');
  assert.ok(bare.endsWith('=') && !bare.endsWith('=='));
  const body = bare.replace(/=+$/, '');
  assert.throws(
    () => loadConfig(BACKENDS, { ...ENV, V1_UPSTREAM_URL: 'https://panel.example.com', V1_UPSTREAM_API_KEYS: `${bare},acme=key-a` }),
    (error: Error) => {
      assert.ok(error instanceof ConfigError, String(error));
      assert.match(error.message, /upstream\.v1\.apiKeys/);
      assert.ok(!error.message.includes(body), `the config error quotes the key: ${error.message}`);
      return true;
    },
  );
  // Two '=' of padding: today the text before them becomes an "upstream id" whose key is "=", and the gateway boots.
  const padded = Buffer.from('secret-upstream-key').toString('base64');
  assert.ok(padded.endsWith('=='));
  assert.throws(() => loadConfig(BACKENDS, { ...ENV, V1_UPSTREAM_URL: 'https://panel.example.com', V1_UPSTREAM_API_KEYS: padded }), ConfigError);
});

t.test('TRUSTED_PROXIES: a value that is not an IP or CIDR is a config error naming the field', async () => {
  for (const value of ['10.0.0.0/33', '10.0.0.1;10.0.0.2', 'lb.internal']) {
    assert.throws(
      () => loadConfig(BACKENDS, { TRUSTED_PROXIES: value }),
      (error: Error) => error instanceof ConfigError && /- trustedProxies/.test(error.message),
      `TRUSTED_PROXIES=${value} was accepted`,
    );
  }
  // What proxy-addr takes stays accepted.
  const config = loadConfig(BACKENDS, { TRUSTED_PROXIES: '10.0.0.1, 10.0.0.0/8, fd00::/8, loopback' });
  assert.deepEqual(config.trustedProxies, ['10.0.0.1', '10.0.0.0/8', 'fd00::/8', 'loopback']);
});

/** The gateway started with this environment over a sandbox's: how it stopped. */
function boot(t: Test, env: NodeJS.ProcessEnv) {
  const dir = mkdtempSync(join(tmpdir(), 'rg-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const all: NodeJS.ProcessEnv = {
    ...process.env, SANDBOX: '1', PORT: '0', OPS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn',
    KEYS_FILE: join(dir, 'keys.json'), AUDIT_LOG_FILE: join(dir, 'audit.log'), ADMIN_AUDIT_LOG_FILE: join(dir, 'admin.log'),
  };
  for (const name of ['CONFIG_FILE', 'REDIS_URL', 'REDIS_CLUSTER_NODES']) delete all[name];
  return spawnSync(process.execPath, [...TSX, 'bin/gateway.ts'], { env: { ...all, ...env }, encoding: 'utf8', timeout: 60_000 });
}

t.test('TRUSTED_PROXIES: the process stops with exit 78 and a message, not a stack trace', async (t) => {
  const result = boot(t, { TRUSTED_PROXIES: '10.0.0.0/33' });
  assert.equal(result.status, 78, result.stderr);
  assert.match(result.stderr, /invalid configuration:\n {2}- trustedProxies/);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'a stack trace');
});

t.test('REDIS_CLUSTER_NODES: a seed that is not host:port is a config error naming the field', async () => {
  for (const value of ['127.0.0.1:notaport', '10.0.0.5:7000,10.0.0.6:70000']) {
    assert.throws(
      () => loadConfig(BACKENDS, { REDIS_CLUSTER_NODES: value }),
      (error: Error) => error instanceof ConfigError && /- redisClusterNodes/.test(error.message),
      `REDIS_CLUSTER_NODES=${value} was accepted`,
    );
  }
  const config = loadConfig(BACKENDS, { REDIS_CLUSTER_NODES: '10.0.0.5:7000, redis-1:7001' });
  assert.deepEqual(config.redisClusterNodes, ['10.0.0.5:7000', 'redis-1:7001']);
});

t.test('WORKERS: auto or a whole number written plainly, 1 to 1024, from the environment or a file; 1e3, 0x2, " 2", 0 are refused naming the field', async () => {
  assert.equal(loadConfig(BACKENDS, { WORKERS: 'auto' }).workers, 'auto');
  assert.equal(parseConfig({ workers: 3 }, BACKENDS).workers, 3);
  assert.throws(() => parseConfig({ workers: 10_000 }, BACKENDS), ConfigError);
  assert.throws(() => parseConfig({ workers: 2.5 }, BACKENDS), ConfigError);
  assert.equal(loadConfig(BACKENDS, { WORKERS: '2' }).workers, 2);
  for (const value of ['1e3', '0x2', ' 2', '0', '-1', '2.5', 'two', '10000']) {
    assert.throws(() => loadConfig(BACKENDS, { WORKERS: value }), (error: Error) => {
      assert.ok(error instanceof ConfigError, `${value}: ${String(error)}`);
      assert.match(error.message, /workers/, value);
      return true;
    }, value);
  }
});

t.test('REDIS_URL: redis:// or rediss://, its database a number; the error never quotes the password', async () => {
  assert.equal(loadConfig(BACKENDS, { REDIS_URL: 'rediss://user:pw@redis.internal:6380/2' }).redisUrl, 'rediss://user:pw@redis.internal:6380/2');
  for (const value of ['redis://:s3cret-pw@127.0.0.1:6379/cache', 'http://:s3cret-pw@127.0.0.1:6379', 'redis://:s3cret-pw@127.0.0.1:6379/1/2']) {
    assert.throws(() => loadConfig(BACKENDS, { REDIS_URL: value }), (error: Error) => {
      assert.ok(error instanceof ConfigError, `${value}: ${String(error)}`);
      assert.match(error.message, /redisUrl/, value);
      assert.ok(!error.message.includes('s3cret-pw'), error.message);
      return true;
    }, value);
  }
});

/**
 * A REDIS_URL that is not a URL at all (a password with an unencoded '#', '/' or '?', a space in
 * the host) is a config error naming `redisUrl`, never quoting it: zod 4 runs a refine even after
 * `.url()` failed, and a `new URL` there threw ERR_INVALID_URL, whose `input` is the whole URL,
 * password included (the key CLI printed it uncaught; the gateway exited 1 with a stack trace).
 */
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

t.test('REDIS_URL that is not a URL: the key CLI exits 78 and does not print the password', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-review-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: BAD_URL, KEYS_FILE: join(dir, 'keys.json') };
  delete env.CONFIG_FILE;
  delete env.REDIS_CLUSTER_NODES;
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'bin/reseller-keys.ts', 'list', '--json'], { env, encoding: 'utf8', timeout: 30_000 });
  assert.ok(!`${result.stdout}${result.stderr}`.includes(PASSWORD), `the password was printed: ${result.stderr}`);
  assert.equal(result.status, 78, result.stderr);
});

t.test('REDIS_URL that is not a URL: the gateway stops with exit 78 and a message, not a stack trace', async (t) => {
  const result = boot(t, { REDIS_URL: BAD_URL });
  assert.equal(result.status, 78, result.stderr);
  assert.match(result.stderr, /invalid configuration:\n {2}- redisUrl/);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'a stack trace');
  assert.ok(!result.stderr.includes(PASSWORD));
});
