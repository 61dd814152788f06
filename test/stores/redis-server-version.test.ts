/**
 * The Redis versions the gateway runs on. XAUTOCLAIM (the webhook outbox's claim) needs Redis 6.2.0
 * (redis src/commands/xautoclaim.json: "since": "6.2.0"); on 6.0 every claim fails with `ERR unknown
 * command 'xautoclaim'`, so an older server is refused at boot (exit 78), not met at the first
 * webhook.
 *
 * Redis 6.x wraps an error that redis.call meets inside a script in the script's own error, where
 * 7.0 passes the command's code first. Redis 6.2.14, src/scripting.c: a write refused before it
 * runs goes through luaPushError (:377-399, "%s: %d: %s" with the shared reply, leading `-` and
 * all: :757 READONLY, :761 MISCONF, :775 NOREPLICAS, :791 OOM), the error handler puts the line in
 * front (:1425 `__redis__err__handler`), and evalGenericCommand answers `Error running script (call
 * to %s): %s` (:1802), `ERR ` in front (networking.c addReplyErrorLength). The strings below are
 * what a 6.2.14 built from that source answered (EVAL of `redis.call('SET',KEYS[1],'x') return 1`).
 * Redis 7.0.15, src/script_lua.c:1717: `-<code> <message> script: <sha>, on @user_script:<line>.`.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import t from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { keysCli } from '../../src/cli/keys.js';
import { ConfigError } from '../../src/config.js';
import { toStoreError } from '../../src/stores/redis/connection.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { StoreUnavailableError } from '../../src/stores/types.js';
import { startRedisServer } from '../helpers/redis.js';
import { bulk, startScriptedRedis, type ScriptedReply } from '../helpers/scripted-redis.js';
import { waitFor } from '../helpers/wait.js';

const wrapped6 = (inner: string): string =>
  `ERR Error running script (call to f_62e6aac9c7520a78c28f012748b42ed670fff5d3): @user_script:1: ${inner}`;
/** A write refused inside a script, as Redis 6.2 answers it. */
const REFUSED_IN_SCRIPT_6 = {
  OOM: wrapped6("@user_script: 1: -OOM command not allowed when used memory > 'maxmemory'."),
  READONLY: wrapped6("@user_script: 1: -READONLY You can't write against a read only replica."),
  MISCONF: wrapped6(
    '@user_script: 1: -MISCONF Redis is configured to save RDB snapshots, but it is currently not able to persist on disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error.',
  ),
  NOREPLICAS: wrapped6('@user_script: 1: -NOREPLICAS Not enough good replicas to write.'),
};
const replyError = (message: string): Error => Object.assign(new Error(message), { name: 'ReplyError' });
const event = { eventId: 'evt_1', accountId: 'acme', body: '{}', trace: {} };

/** INFO as a server of that version answers it (the sections the gateway and ioredis read). */
const info = (fields: string): string => bulk(`# Server\r\n${fields}\r\nloading:0\r\n# Memory\r\nmaxmemory_policy:noeviction\r\n`);
const REDIS_6_2 = info('redis_version:6.2.14\r\nredis_mode:standalone');
const REDIS_6_0 = info('redis_version:6.0.20\r\nredis_mode:standalone');
// valkey src/version.h (8.0.1): REDIS_VERSION "7.2.4", the compatibility version; src/server.c genValkeyInfoString.
const VALKEY_8 = info('redis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\nredis_mode:standalone');
/** A user without @dangerous: INFO and CONFIG refused (the maxmemory-policy is then reported unknown). */
const NO_INFO = { info: "-NOPERM this user has no permissions to run the 'info' command\r\n", config: "-NOPERM this user has no permissions to run the 'config' command\r\n" };
const hello = (version: string): string =>
  `*14\r\n${['server', 'redis', 'version', version, 'proto'].map(bulk).join('')}:2\r\n${bulk('id')}:7\r\n${['mode', 'standalone', 'role', 'master', 'modules'].map(bulk).join('')}*0\r\n`;

t.test('a write refused inside a script is unavailability on Redis 6 as on 7; a script\'s other errors stay', async () => {
  for (const [code, message] of Object.entries(REFUSED_IN_SCRIPT_6)) {
    assert.ok(toStoreError(replyError(message)) instanceof StoreUnavailableError, `Redis 6 ${code}`);
    const redis7 = `${message.slice(message.lastIndexOf(': -') + 3)} script: 62e6aac9c7520a78c28f012748b42ed670fff5d3, on @user_script:1.`;
    assert.ok(toStoreError(replyError(redis7)) instanceof StoreUnavailableError, `Redis 7 ${code}`);
  }
  // A command's own error inside a script: redisProtocolToLuaType_Error (:283), no second location.
  for (const message of [wrapped6("NOGROUP No such key 'nos' or consumer group 'g'"), wrapped6('ERR value is not an integer or out of range')]) {
    const error = replyError(message);
    assert.equal(toStoreError(error), error, message);
  }
});

t.test('Redis 6.2: a script\'s write refused as READONLY (a demoted primary) connects again, and is unavailability', async (t) => {
  const server = await startScriptedRedis({ info: REDIS_6_2, evalsha: `-${REFUSED_IN_SCRIPT_6.READONLY}\r\n` });
  const stores = await createRedisStores({ url: server.url, keyPrefix: 'v6:' });
  t.teardown(async () => {
    await stores.close();
    await server.close();
  });
  const before = server.connections;
  const error: unknown = await stores.webhookOutbox.enqueue(event).then(() => undefined, (caught: unknown) => caught);
  const deadline = Date.now() + 3_000;
  while (server.connections === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(server.connections > before, 'connected again');
  assert.ok(error instanceof StoreUnavailableError, String(error));

  server.replies.set('evalsha', `-${REFUSED_IN_SCRIPT_6.OOM}\r\n`);
  await assert.rejects(stores.webhookOutbox.enqueue(event), StoreUnavailableError);
});

t.test('the machine\'s Redis (7.0; or the one first on PATH): a script\'s write on a replica is unavailability and connects again', async (t) => {
  const [primary, replica] = await Promise.all([startRedisServer(), startRedisServer()]);
  const admin = new Redis(replica.url);
  t.teardown(async () => {
    admin.disconnect();
    await Promise.all([primary.stop(), replica.stop()]);
  });
  await admin.replicaof('127.0.0.1', String(primary.port));
  const stores = await createRedisStores({ url: replica.url, keyPrefix: 'v7:' });
  t.teardown(() => stores.close());
  const connections = async (): Promise<number> => Number(/total_connections_received:(\d+)/.exec(await admin.info('stats'))?.[1]);
  const before = await connections();
  await assert.rejects(stores.webhookOutbox.enqueue(event), (error: Error) => error instanceof StoreUnavailableError && /READONLY/.test(error.message));
  const deadline = Date.now() + 3_000;
  while ((await connections()) === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok((await connections()) > before, 'connected again');
});

t.test('the server\'s version at boot', async (t) => {
  /** Whether stores open on a server answering `replies`, and the warnings about its version. */
  const open = async (replies: Record<string, ScriptedReply>): Promise<{ result: unknown; warnings: string[] }> => {
    const server = await startScriptedRedis(replies);
    t.teardown(() => server.close());
    const warnings: string[] = [];
    const onWarning = (warning: string): unknown => /version/.test(warning) && warnings.push(warning);
    const result = await createRedisStores({ url: server.url, onWarning }).then(
      async (stores) => {
        await stores.close();
        return 'started';
      },
      (error: unknown) => error,
    );
    return { result, warnings };
  };
  const tooOld = (result: unknown): boolean =>
    result instanceof ConfigError && /Redis 6\.0\.20 .*older than.*6\.2\.0 or later/.test(result.message);

  t.test('Redis 6.0 is refused, naming the minimum', async () => {
    const { result } = await open({ info: REDIS_6_0 });
    assert.ok(tooOld(result), String(result));
  });
  t.test('Redis 6.2 and Valkey 8 (redis_version 7.2.4) start without a word', async () => {
    for (const answer of [REDIS_6_2, VALKEY_8]) assert.deepEqual(await open({ info: answer }), { result: 'started', warnings: [] });
  });
  t.test('INFO refused (a user without @dangerous): HELLO tells', async () => {
    assert.ok(tooOld((await open({ ...NO_INFO, hello: hello('6.0.20') })).result));
    assert.deepEqual(await open({ ...NO_INFO, hello: hello('6.2.14') }), { result: 'started', warnings: [] });
  });
  t.test('neither says (INFO refused, HELLO without arguments before 6.2): it starts, and says what it needs', async () => {
    // ioredis sends HELLO 3 at connect, which 6.0 answers; HELLO alone it refuses (arity -2 before 6.2).
    const helloOf60 = (args: string[]): string => (args.length === 0 ? "-ERR wrong number of arguments for 'hello' command\r\n" : hello('6.0.20'));
    const { result, warnings } = await open({ ...NO_INFO, hello: helloOf60 });
    assert.equal(result, 'started');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /Redis version unknown.*6\.2\.0 or later/);
  });
  t.test('the machine\'s Redis, persisting its data, starts without a word', async () => {
    const server = await startRedisServer({ args: ['--save', '3600 1'] });
    t.teardown(() => server.stop());
    const warnings: string[] = [];
    const stores = await createRedisStores({ url: server.url, onWarning: (warning) => warnings.push(warning) });
    await stores.close();
    assert.deepEqual(warnings, []);
  });
});

t.test('connected again to a server older than 6.2 (a failover to an old replica): said at once, naming the minimum', async (t) => {
  const server = await startScriptedRedis({ info: REDIS_6_2 });
  t.teardown(() => server.close());
  const warnings: string[] = [];
  const stores = await createRedisStores({ url: server.url, onWarning: (warning) => warnings.push(warning) });
  t.teardown(() => stores.close());
  assert.deepEqual(warnings, [], 'Redis 6.2 at start');
  server.replies.set('info', REDIS_6_0);
  const before = server.connections;
  server.dropConnections();
  await waitFor(() => (warnings.length > 0 && server.connections > before ? true : undefined), 5_000, 'a warning after the reconnection');
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] ?? '', /Redis 6\.0\.20 .*older than.*6\.2\.0 or later/);
});

for (const workers of ['1', '2']) t.test(`the gateway process (WORKERS=${workers}) on Redis 6.0: exit 78, the minimum named, no stack trace`, async (t) => {
  const server = await startScriptedRedis({ info: REDIS_6_0, get: '$-1\r\n' });
  const dir = mkdtempSync(join(tmpdir(), 'rg-review-redisver-'));
  t.teardown(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SANDBOX: '1',
    REDIS_URL: server.url,
    PORT: '0',
    OPS_PORT: '0',
    AUDIT_LOG_FILE: join(dir, 'audit.log'),
    ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'),
    LOG_LEVEL: 'warn',
    WORKERS: workers,
  };
  // Not spawnSync: the scripted server answers from this process's event loop.
  const gateway = spawn(process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  gateway.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const timer = setTimeout(() => gateway.kill('SIGKILL'), 30_000);
  const code = await new Promise<number | null>((resolve) => gateway.once('exit', resolve));
  clearTimeout(timer);
  assert.equal(code, 78, stderr);
  assert.match(stderr, /^reseller-gateway: Redis 6\.0\.20 at 127\.0\.0\.1:\d+ is older than the gateway needs: Redis 6\.2\.0 or later/m);
  assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
});

t.test('the key CLI on Redis 6.0: exit 78 (the configuration), the minimum named', async (t) => {
  const server = await startScriptedRedis({ info: REDIS_6_0 });
  const dir = mkdtempSync(join(tmpdir(), 'rg-review-redisver-cli-'));
  t.teardown(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  let stderr = '';
  const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: server.url, KEY_PEPPER: 'p'.repeat(43), AUDIT_LOG_FILE: join(dir, 'audit.log') };
  delete env.CONFIG_FILE;
  const code = await keysCli(BACKENDS, ['account', 'list'], { out: () => undefined, err: (text) => (stderr += text), env });
  assert.equal(code, 78, stderr);
  assert.match(stderr, /^reseller-keys: Redis 6\.0\.20 at .* is older than the gateway needs: Redis 6\.2\.0 or later/);
});
