/**
 * Durable delivery on Redis: a worker killed with SIGKILL while 100 events are pending loses none
 * (a new process claims them), and two gateway instances on one Redis deliver each event once.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { startWhmcsSimulator } from '../../simulators/whmcs/server.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { newWebhookSecret } from '../../src/webhooks/signing.js';
import { webhookRecord } from '../stores/conformance.js';
import { buildTestGateway, TEST_WEBHOOK_KEY } from '../helpers/gateway.js';
import { call } from '../helpers/http.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';
import { eventually, startReceiver, verify, type Receiver } from '../helpers/webhook-receiver.js';

let redis: RedisServer;
let receiver: Receiver;
t.before(async () => {
  redis = await startRedisServer();
  receiver = await startReceiver();
});
t.teardown(async () => {
  await receiver.close();
  await redis.stop();
});

function startWorkerProcess(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/webhooks/fixtures/delivery-process.ts'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`worker process exited early (${code})`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(child);
    });
  });
}

t.test('webhook delivery on Redis', async (t) => {
  t.test('kill -9 with 100 events pending: all 100 are delivered after a restart, duplicates only with the same webhook-id', async () => {
    const keyPrefix = `crash-${randomUUID()}:`;
    const secret = newWebhookSecret();
    const stores = await createRedisStores({ url: redis.url, keyPrefix });
    const box = new SecretBox(Buffer.from(TEST_WEBHOOK_KEY, 'base64'));
    await stores.webhooks.set('acme', webhookRecord(receiver.url, box.seal(secret), new Date().toISOString()), null);
    await stores.close();

    // The receiver holds every request open: the first worker dies with its deliveries in flight.
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = true;
    receiver.received.length = 0;
    receiver.answer = () => (holding ? held.then(() => ({ status: 200 })) : { status: 200 });
    const env = { REDIS_URL: redis.url, KEY_PREFIX: keyPrefix, BOX_KEY: TEST_WEBHOOK_KEY };
    const first = await startWorkerProcess({ ...env, EVENTS: '100' });
    await eventually(async () => receiver.received.length >= 8, 'the first worker has deliveries in flight');
    const exited = new Promise((resolve) => first.once('exit', resolve));
    first.kill('SIGKILL');
    await exited;
    holding = false;
    release();

    const second = await startWorkerProcess(env);
    try {
      const ids = await eventually(async () => {
        const delivered = new Set(receiver.received.filter((r) => r.event.type === 'webhook.test').map((r) => String(r.headers['webhook-id'])));
        return delivered.size >= 100 ? delivered : undefined;
      }, 'all 100 events delivered', 30_000);
      assert.equal(ids.size, 100);
      for (const delivery of receiver.received) verify(secret, delivery);
      const byId = new Map<string, Set<string>>();
      for (const r of receiver.received) {
        const id = String(r.headers['webhook-id']);
        byId.set(id, (byId.get(id) ?? new Set()).add(r.body));
      }
      assert.ok([...byId.values()].every((bodies) => bodies.size === 1), 'a repeated delivery is the same event');
    } finally {
      second.kill('SIGKILL');
    }
  });

  t.test('two gateway instances on one Redis deliver each event once', async () => {
    receiver.answer = () => ({ status: 200 });
    receiver.received.length = 0;
    const keyPrefix = `pair-${randomUUID()}:`;
    const simulator = await startWhmcsSimulator();
    const webhooks = { allowPrivateTargets: true, pollIntervalMs: 200, workerIntervalMs: 30 };
    const one = await buildTestGateway({ simulator, runWebhooks: true, stores: await createRedisStores({ url: redis.url, keyPrefix }), config: { webhooks } });
    const two = await buildTestGateway({
      simulator,
      runWebhooks: true,
      issueKeys: false,
      stores: await createRedisStores({ url: redis.url, keyPrefix }),
      config: { webhooks },
    });
    try {
      const key = one.keys['acme:all'] as string;
      const bases = [await one.app.listen({ host: '127.0.0.1', port: 0 }), await two.app.listen({ host: '127.0.0.1', port: 0 })];
      const set = await call(bases[0] as string, 'PUT', '/v1/webhooks', { key, body: { url: receiver.url } });
      assert.equal(set.status, 200, set.text);
      for (let index = 0; index < 20; index += 1) {
        const acted = await call(bases[index % 2] as string, 'POST', '/v1/services/1/actions', {
          key,
          body: { action: 'reboot' },
          headers: { 'idempotency-key': randomUUID() },
        });
        assert.equal(acted.status, 200, acted.text);
      }
      await eventually(async () => receiver.received.filter((r) => r.event.type === 'service.action.succeeded').length >= 20, 'all actions announced');
      // Let both instances finish whatever they still hold, then count.
      await Promise.all([one.app.close(), two.app.close()]);
      const ids = receiver.received.map((r) => String(r.headers['webhook-id']));
      assert.equal(new Set(ids).size, ids.length, 'no event was delivered twice');
      assert.equal(receiver.received.filter((r) => r.event.type === 'webhook.test').length, 1);
      for (const delivery of receiver.received) verify(set.json().secret, delivery);
    } finally {
      await one.close().catch(() => undefined);
      await two.close().catch(() => undefined);
      await simulator.close();
    }
  });
});
