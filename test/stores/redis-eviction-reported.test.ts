/**
 * The Redis the gateway is given, configured as operators' Redis often is. A managed Redis
 * (ElastiCache, Azure Cache, Memorystore) refuses CONFIG and ships with an evicting
 * maxmemory-policy (volatile-lru): the boot check must still see the policy, from INFO memory. A
 * least-privilege ACL user (`-@dangerous`) may read neither: that is said too, not taken as fine.
 * A failover can land on a server configured otherwise: the check runs again on reconnection. A
 * full Redis with noeviction refuses writes: a write's webhook event is held, not lost.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import t from 'tap';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { StoreUnavailableError, type Stores } from '../../src/stores/types.js';
import { WebhookEvents } from '../../src/webhooks/emitter.js';
import { startRedisCluster, startRedisServer, type RedisServer } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const silent = pino({ level: 'silent' });

/** Hears the eviction warnings only: the harness's Redis persists nothing, which is said too. */
const aboutEviction = (warnings: string[]) => (warning: string): unknown => /maxmemory-policy/.test(warning) && warnings.push(warning);

async function warningsOf(url: string): Promise<string[]> {
  const warnings: string[] = [];
  const stores = await createRedisStores({ url, onWarning: aboutEviction(warnings) });
  await stores.close();
  return warnings;
}

t.test('a managed Redis (CONFIG disabled) with an evicting policy is reported at start', async () => {
  const server = await startRedisServer({ args: ['--rename-command', 'CONFIG', '', '--maxmemory', '64mb', '--maxmemory-policy', 'volatile-lru'] });
  try {
    const warnings = await warningsOf(server.url);
    assert.equal(warnings.length, 1, 'one warning');
    assert.match(warnings[0] ?? '', /maxmemory-policy is volatile-lru.*noeviction/);
  } finally {
    await server.stop();
  }
});

t.test('a Redis user allowed neither INFO nor CONFIG: the policy is said to be unknown, not taken as noeviction', async () => {
  const server = await startRedisServer({ args: ['--user', 'gateway', 'on', '>gateway-pass', '~*', '&*', '+@all', '-@dangerous', '--maxmemory-policy', 'allkeys-lru'] });
  try {
    const warnings = await warningsOf(`redis://gateway:gateway-pass@127.0.0.1:${server.port}`);
    assert.equal(warnings.length, 1, 'one warning');
    assert.match(warnings[0] ?? '', /maxmemory-policy.*unknown.*noeviction/);
    assert.doesNotMatch(warnings[0] ?? '', /gateway-pass/);
  } finally {
    await server.stop();
  }
});

t.test('noeviction read from INFO memory is not reported', async () => {
  const server = await startRedisServer({ args: ['--rename-command', 'CONFIG', '', '--maxmemory', '64mb', '--maxmemory-policy', 'noeviction'] });
  try {
    assert.deepEqual(await warningsOf(server.url), []);
  } finally {
    await server.stop();
  }
});

t.test('a cluster with one evicting master is reported', async () => {
  const cluster = await startRedisCluster();
  const [first, second] = cluster.nodes;
  const admin = new Redis(second?.port ?? 0, '127.0.0.1');
  try {
    await admin.config('SET', 'maxmemory-policy', 'allkeys-random');
    const warnings: string[] = [];
    const stores = await createRedisStores({ clusterNodes: [first ?? { host: '', port: 0 }], onWarning: aboutEviction(warnings) });
    await stores.close();
    assert.equal(warnings.length, 1, 'one warning');
    assert.match(warnings[0] ?? '', /maxmemory-policy is allkeys-random/);
  } finally {
    admin.disconnect();
    await cluster.stop();
  }
});

t.test('reconnected to a server that evicts (a failover to a node configured otherwise): reported again', async () => {
  const server = await startRedisServer();
  const admin = new Redis(server.url);
  const warnings: string[] = [];
  const stores = await createRedisStores({ url: server.url, onWarning: aboutEviction(warnings) });
  try {
    assert.deepEqual(warnings, [], 'noeviction at start');
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal');
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    const deadline = Date.now() + 5_000;
    while (warnings.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(warnings.length, 1, 'reported once the client is connected again');
    assert.match(warnings[0] ?? '', /maxmemory-policy is allkeys-lru/);
  } finally {
    admin.disconnect();
    await stores.close();
    await server.stop();
  }
});

t.test('Redis full with noeviction: a write\'s webhook event is held, then queued once Redis takes writes again', async () => {
  const server: RedisServer = await startRedisServer();
  const admin = new Redis(server.url);
  const stores: Stores = await createRedisStores({ url: server.url });
  let events: WebhookEvents | undefined;
  try {
    events = new WebhookEvents(stores.webhooks, stores.webhookOutbox, silent, () => undefined, Date.now, { firstRetryMs: 50, longestRetryMs: 100 });
    const endpoint = {
      url: 'https://hooks.example.com/a',
      secret: 'sealed',
      previousSecret: null,
      previousSecretExpiresAt: null,
      updatedAt: new Date().toISOString(),
      status: 'enabled' as const,
      disabledReason: null,
      lastDelivery: null,
      failingSince: null,
      reportFrom: new Date().toISOString(),
    };
    assert.ok(await stores.webhooks.set('acme', endpoint, null));
    await admin.config('SET', 'maxmemory', '1');
    await assert.rejects(stores.webhookOutbox.enqueue({ eventId: 'evt_probe', accountId: 'acme', body: '{}', trace: {} }), StoreUnavailableError);
    await events.emitForWrite('acme', 'webhook.test', { url: 'https://hooks.example.com/a' });
    assert.equal(events.heldCount, 1, 'held, not dropped');
    assert.equal((await stores.webhookOutbox.backlog()).depth, 0, 'nothing queued while Redis refuses writes');
    await admin.config('SET', 'maxmemory', '0');
    const deadline = Date.now() + 5_000;
    while (events.heldCount > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(events.heldCount, 0);
    const [claimed] = await stores.webhookOutbox.claim('probe', 10, 60_000);
    assert.equal(JSON.parse(claimed?.body ?? '{}').type, 'webhook.test', 'the event reached the outbox');
  } finally {
    await events?.close();
    admin.disconnect();
    await stores.close();
    await server.stop();
  }
});

t.test('the gateway process logs the warning found on a reconnection', async () => {
  const redis = await startRedisServer();
  const admin = new Redis(redis.url);
  const dir = mkdtempSync(join(tmpdir(), 'rg-redisdur-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SANDBOX: '1',
    REDIS_URL: redis.url,
    PORT: '0',
    OPS_PORT: '0',
    AUDIT_LOG_FILE: join(dir, 'audit.log'),
    LOG_LEVEL: 'warn',
  };
  const gateway = spawn(process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  gateway.stdout?.on('data', (chunk) => (output += String(chunk)));
  gateway.stderr?.on('data', (chunk) => (output += String(chunk)));
  try {
    await waitFor(async () => (output.includes('try: curl') ? true : undefined), 30_000);
    assert.doesNotMatch(output, /maxmemory-policy/, 'noeviction at start');
    await admin.config('SET', 'maxmemory-policy', 'volatile-lru');
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal');
    await waitFor(async () => (/"level":40.*maxmemory-policy is volatile-lru/.test(output) ? true : undefined), 10_000);
  } finally {
    gateway.kill('SIGKILL');
    admin.disconnect();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
