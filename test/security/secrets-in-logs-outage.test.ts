/**
 * The log lines of an outage, grepped for planted secrets. A gateway on a Redis
 * with a password meets, in turn: its upstream failing (requests and the change detector), its
 * credentials audit log unwritable, Redis gone, and Redis back with another password (rotated on
 * the server first). None of the Redis password, the WHMCS identifier, secret and access key, the
 * API key, the webhook secret or a service password may reach the log on any of these paths.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { Redis } from 'ioredis';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { bearer, buildTestGateway } from '../helpers/gateway.js';
import { startRedisServer } from '../helpers/redis.js';
import { eventually } from '../helpers/webhook-receiver.js';

const REDIS_PASSWORD = 'planted-redis-Pa55word-9c1e';
const ACCESS_KEY = 'planted-access-KEY-0f9e8d7c';

t.test('an outage\'s log lines hold no secret', async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  /** Sets the server's password, and makes every other client connect (and authenticate) again. */
  const requirePassword = async (password: string, current?: string) => {
    const admin = new Redis({ port: redis.port, host: '127.0.0.1', password: current, lazyConnect: true });
    await admin.connect();
    await admin.config('SET', 'requirepass', password);
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal');
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    admin.disconnect();
  };
  await requirePassword(REDIS_PASSWORD);
  const stores = await createRedisStores({ url: `redis://:${REDIS_PASSWORD}@127.0.0.1:${redis.port}`, commandTimeoutMs: 200 });
  const gw = await buildTestGateway({
    stores,
    runWebhooks: true,
    whmcs: { accessKey: ACCESS_KEY, timeoutMs: 500 },
    config: { logLevel: 'trace', webhooks: { pollIntervalMs: 50, workerIntervalMs: 20 } },
  });
  t.teardown(() => gw.close());
  const key = gw.keys['acme:all'] as string;
  const lines = () => gw.logs.join('');
  const get = (url: string) => gw.app.inject({ url, headers: bearer(key) });

  const webhook = await gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers: { ...bearer(key), 'content-type': 'application/json' }, payload: JSON.stringify({ url: 'https://hooks.example.com/in' }) });
  assert.equal(webhook.statusCode, 200, webhook.body);
  const credentials = await get('/v1/services/1/credentials');
  assert.equal(credentials.statusCode, 200);
  const secrets = [REDIS_PASSWORD, ACCESS_KEY, gw.simulator.secret, gw.simulator.identifier, key, webhook.json().secret as string, credentials.json().password as string];

  // The upstream failing: requests, and the change detector's reads.
  gw.simulator.inject({ kind: 'html' });
  for (const url of ['/v1/services', '/v1/me', '/v1/services/1/credentials']) await get(url);
  gw.simulator.inject({ kind: 'reset' });
  await get('/v1/services');
  await eventually(async () => lines().includes('webhook change detection failed for an account'), 'a detector failure logged');
  gw.simulator.clearFaults();

  // The credentials audit log unwritable.
  gw.audit.failing = true;
  await get('/v1/services/1/credentials');
  assert.ok(lines().includes('audit record could not be written'));
  gw.audit.failing = false;

  // Redis gone, then back with a password the gateway does not know.
  await redis.stop();
  await get('/v1/me');
  await eventually(async () => lines().includes('webhook outbox unavailable'), 'the worker meets the outbox down');
  await redis.restart();
  await requirePassword('rotated-on-the-server-first');
  for (let i = 0; i < 5; i++) await get('/v1/me');
  await new Promise((resolve) => setTimeout(resolve, 300));
  await gw.close();

  const output = lines();
  for (const path of ['shared store (Redis) unreachable', 'upstream failure', 'webhook change detection failed', 'audit record could not be written', 'webhook outbox unavailable']) {
    assert.ok(output.includes(path), `the path was reached: ${path}`);
  }
  for (const secret of secrets) {
    assert.ok(secret.length >= 8);
    assert.ok(!output.includes(secret), `a secret reached the log: ${secret.slice(0, 6)}…`);
    assert.ok(!output.includes(encodeURIComponent(secret)), `a secret reached the log, URL-encoded: ${secret.slice(0, 6)}…`);
  }
});
