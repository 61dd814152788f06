/**
 * A Redis that persists nothing (no append-only file, no RDB save points) loses every API key,
 * idempotency record and webhook event waiting in the outbox when it restarts. The stores say so
 * when they connect, as they say an evicting maxmemory-policy: one line, each master of a cluster
 * read, a managed Redis's refused CONFIG told as unknown rather than taken as fine.
 */
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import t from 'tap';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { startRedisCluster, startRedisServer } from '../helpers/redis.js';

const PERSISTENCE = /persist/i;

async function persistenceWarnings(options: Parameters<typeof createRedisStores>[0]): Promise<string[]> {
  const warnings: string[] = [];
  const stores = await createRedisStores({ ...options, onWarning: (warning) => warnings.push(warning) });
  await stores.close();
  return warnings.filter((warning) => PERSISTENCE.test(warning));
}

async function warningsOfServer(args: string[]): Promise<string[]> {
  const server = await startRedisServer({ args });
  try {
    return await persistenceWarnings({ url: server.url });
  } finally {
    await server.stop();
  }
}

t.test('no append-only file and no save points: one warning naming the server, what a restart loses, and the fix', async () => {
  const warnings = await warningsOfServer(['--save', '', '--appendonly', 'no']);
  assert.equal(warnings.length, 1, String(warnings));
  const [warning = ''] = warnings;
  assert.match(warning, /Redis persists nothing at 127\.0\.0\.1:\d+/);
  assert.match(warning, /API key/);
  assert.match(warning, /idempotency/);
  assert.match(warning, /appendonly yes/);
});

t.test('an append-only file, or RDB save points: nothing said', async () => {
  assert.deepEqual(await warningsOfServer(['--appendonly', 'yes', '--save', '']), [], 'AOF');
  assert.deepEqual(await warningsOfServer(['--save', '3600 1']), [], 'RDB');
});

t.test('CONFIG disabled (a managed Redis): an append-only file is read from INFO persistence; otherwise unknown, not fine', async () => {
  assert.deepEqual(await warningsOfServer(['--rename-command', 'CONFIG', '', '--appendonly', 'yes']), [], 'AOF seen in INFO');
  const warnings = await warningsOfServer(['--rename-command', 'CONFIG', '', '--save', '3600 1']);
  assert.equal(warnings.length, 1, String(warnings));
  assert.match(warnings[0] ?? '', /persistence is unknown at 127\.0\.0\.1:\d+/);
});

t.test('a cluster: each master is read, and only the one persisting nothing is named', async () => {
  const cluster = await startRedisCluster();
  const [first, second, third] = cluster.nodes;
  const admins = [first, second].map((node) => new Redis(node?.port ?? 0, '127.0.0.1'));
  try {
    for (const admin of admins) await admin.config('SET', 'appendonly', 'yes');
    const warnings = await persistenceWarnings({ clusterNodes: [first ?? { host: '', port: 0 }] });
    assert.equal(warnings.length, 1, String(warnings));
    assert.match(warnings[0] ?? '', new RegExp(`persists nothing at 127\\.0\\.0\\.1:${third?.port}[^,\\d]`));
    assert.doesNotMatch(warnings[0] ?? '', new RegExp(`:${first?.port}\\b|:${second?.port}\\b`));
  } finally {
    for (const admin of admins) admin.disconnect();
    await cluster.stop();
  }
});
