/**
 * Head-of-line blocking (reference S7): one account whose receiver hangs holds at most
 * perAccountConcurrency delivery slots, so another account's event is delivered at once instead of
 * after the hanging ones time out. What waits is put back, never lost, sent twice or counted as an
 * attempt; memory and Redis outboxes alike.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import pino from 'pino';
import { WebhookConfigSchema } from '../../src/config.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import type { Stores } from '../../src/stores/types.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { DeliveryWorker } from '../../src/webhooks/worker.js';
import { unique, webhookRecord } from '../stores/conformance.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';
import { eventually, startReceiver } from '../helpers/webhook-receiver.js';
import { LIVE_ACCOUNTS } from '../helpers/worker-harness.js';

const SLOW_EVENTS = 12;
const WORKER_INTERVAL_MS = 20;

let redis: RedisServer;
t.before(async () => {
  redis = await startRedisServer();
});
t.teardown(async () => {
  await redis.stop();
});

/** `instances` workers share the stores, as instances (or WORKERS processes) share Redis. */
async function scenario(stores: Stores, instances = 1): Promise<void> {
  const box = new SecretBox(randomBytes(32));
  const slow = await startReceiver();
  const fast = await startReceiver();
  let answerSlow = (): void => undefined;
  const hanging = new Promise<void>((resolve) => (answerSlow = resolve));
  slow.answer = () => hanging.then(() => ({ status: 200 }));
  // Defaults but for speed: 8 slots, 2 per account.
  const config = WebhookConfigSchema.parse({ allowPrivateTargets: true, workerIntervalMs: WORKER_INTERVAL_MS, retryScheduleMs: [0, 60_000] });
  const workers = Array.from({ length: instances }, () => new DeliveryWorker({
    outbox: stores.webhookOutbox,
    store: stores.webhooks,
    accounts: LIVE_ACCOUNTS,
    box,
    config,
    transport: { resolve: async () => ['127.0.0.1'], allowPrivateTargets: true },
    log: pino({ level: 'silent' }),
  }));
  try {
    const [slowco, fastco] = [unique('slowco'), unique('fastco')];
    await stores.webhooks.set(slowco, webhookRecord(slow.url, box.seal('whsec_dGVzdA=='), new Date().toISOString()), null);
    await stores.webhooks.set(fastco, webhookRecord(fast.url, box.seal('whsec_dGVzdA=='), new Date().toISOString()), null);
    const enqueue = (accountId: string, eventId: string) =>
      stores.webhookOutbox.enqueue({ eventId, accountId, body: JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: {} }), trace: {} });
    const slowIds = Array.from({ length: SLOW_EVENTS }, (_, index) => `evt_slow${index}`);
    for (const id of slowIds) await enqueue(slowco, id);
    await enqueue(fastco, 'evt_fast');

    const started = Date.now();
    for (const worker of workers) worker.start();
    // Before: every slot hung on slowco, and evt_fast waited for the 15 s timeouts.
    await fast.waitFor((r) => r.headers['webhook-id'] === 'evt_fast', 'the other account\'s event', 2_000);
    assert.ok(Date.now() - started < 2_000, `delivered after ${Date.now() - started} ms`);
    await sleep(10 * WORKER_INTERVAL_MS);
    assert.equal(slow.received.length, config.perAccountConcurrency, 'the hanging account holds its share of slots, no more, however many instances deliver');

    answerSlow();
    await eventually(async () => slow.received.length >= SLOW_EVENTS && (await stores.webhookOutbox.backlog()).depth === 0, 'all slow events delivered');
    await sleep(10 * WORKER_INTERVAL_MS);
    const sent = slow.received.map((r) => String(r.headers['webhook-id']));
    assert.deepEqual([...sent].sort(), [...slowIds].sort(), 'each event once: none lost, none twice');
    for (const id of slowIds) {
      const logged = await stores.webhooks.getDelivery(slowco, id);
      assert.deepEqual([logged?.state, logged?.attempts], ['delivered', 1], `${id}: put back unattempted, then one attempt`);
    }
  } finally {
    answerSlow();
    await Promise.all(workers.map((worker) => worker.stop()));
    await slow.close();
    await fast.close();
  }
}

t.test('per-account concurrency: a hanging receiver does not hold up other accounts', async (t) => {
  t.test('memory outbox', async () => {
    const stores = createMemoryStores();
    try {
      await scenario(stores);
    } finally {
      await stores.close();
    }
  });

  t.test('redis outbox', async () => {
    const stores = await createRedisStores({ url: redis.url, keyPrefix: `${unique('hol')}:` });
    try {
      await scenario(stores);
    } finally {
      await stores.close();
    }
  });

  t.test('three instances on one Redis: the account\'s share is one for all of them', async () => {
    const stores = await createRedisStores({ url: redis.url, keyPrefix: `${unique('hol')}:` });
    try {
      await scenario(stores, 3);
    } finally {
      await stores.close();
    }
  });
});
