/**
 * Fairness across accounts with a backlog: one account with many events queued and a receiver that
 * never answers must not hold up another account's event behind its backlog. Shown by counts: how
 * many outbox entries the workers read before the other account's event went out, which must not
 * grow with the first account's backlog. Memory and Redis outboxes, one and two instances.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import pino from 'pino';
import { WebhookConfigSchema } from '../../src/config.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import type { Stores } from '../../src/stores/types.js';
import type { WebhookOutbox } from '../../src/stores/webhook-types.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { DeliveryWorker } from '../../src/webhooks/worker.js';
import { unique, webhookRecord } from '../stores/conformance.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';
import { eventually, startReceiver } from '../helpers/webhook-receiver.js';
import { LIVE_ACCOUNTS } from '../helpers/worker-harness.js';

const BACKLOG = 300;

let redis: RedisServer;
t.before(async () => {
  redis = await startRedisServer();
});
t.teardown(async () => {
  await redis.stop();
});

async function scenario(stores: Stores, instances: number): Promise<void> {
  const box = new SecretBox(randomBytes(32));
  const flooded = await startReceiver();
  const other = await startReceiver();
  let answerFlooded = (): void => undefined;
  const hanging = new Promise<void>((resolve) => (answerFlooded = resolve));
  flooded.answer = () => hanging.then(() => ({ status: 200 }));
  // Every entry the workers read from the outbox, counted until the other account's event is sent.
  let read = 0;
  let readBeforeOther: number | undefined;
  other.answer = () => {
    readBeforeOther ??= read;
    return { status: 200 };
  };
  const outbox: WebhookOutbox = Object.create(stores.webhookOutbox) as WebhookOutbox;
  outbox.claim = async (...args) => {
    const claimed = await stores.webhookOutbox.claim(...args);
    read += claimed.length;
    return claimed;
  };
  const config = WebhookConfigSchema.parse({ allowPrivateTargets: true, workerIntervalMs: 20, retryScheduleMs: [0, 60_000] });
  const workers = Array.from({ length: instances }, () => new DeliveryWorker({
    outbox,
    store: stores.webhooks,
    accounts: LIVE_ACCOUNTS,
    box,
    config,
    transport: { resolve: async () => ['127.0.0.1'], allowPrivateTargets: true },
    log: pino({ level: 'silent' }),
  }));
  try {
    const [floodco, otherco] = [unique('floodco'), unique('otherco')];
    await stores.webhooks.set(floodco, webhookRecord(flooded.url, box.seal('whsec_dGVzdA=='), new Date().toISOString()), null);
    await stores.webhooks.set(otherco, webhookRecord(other.url, box.seal('whsec_dGVzdA=='), new Date().toISOString()), null);
    const enqueue = (accountId: string, eventId: string) =>
      stores.webhookOutbox.enqueue({ eventId, accountId, body: JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: {} }), trace: {} });
    const floodIds = Array.from({ length: BACKLOG }, (_, index) => `evt_flood${String(index).padStart(4, '0')}`);
    for (const id of floodIds) await enqueue(floodco, id);
    await enqueue(otherco, 'evt_other');

    for (const worker of workers) worker.start();
    await other.waitFor((r) => r.headers['webhook-id'] === 'evt_other', "the other account's event", 60_000);
    assert.ok(
      readBeforeOther !== undefined && readBeforeOther <= 4 * config.concurrency * instances,
      `the other account's event went out after ${readBeforeOther} outbox entries were read (the flooded account has ${BACKLOG} queued)`,
    );
    await flooded.waitFor(() => flooded.received.length >= config.perAccountConcurrency, "the flooded account's share in flight");
    assert.equal(flooded.received.length, config.perAccountConcurrency, 'the flooded account has its share in flight, no more');

    answerFlooded();
    await eventually(async () => flooded.received.length >= BACKLOG && (await stores.webhookOutbox.backlog()).depth === 0, 'the whole backlog delivered', 60_000);
    const sent = flooded.received.map((r) => String(r.headers['webhook-id']));
    assert.deepEqual([...sent].sort(), floodIds, 'each event once: none lost, none twice');
  } finally {
    answerFlooded();
    await Promise.all(workers.map((worker) => worker.stop()));
    await flooded.close();
    await other.close();
  }
}

t.test('memory outbox', async () => {
  const stores = createMemoryStores();
  try {
    await scenario(stores, 1);
  } finally {
    await stores.close();
  }
});

t.test('redis outbox, one instance', async () => {
  const stores = await createRedisStores({ url: redis.url, keyPrefix: `${unique('fair')}:` });
  try {
    await scenario(stores, 1);
  } finally {
    await stores.close();
  }
});

t.test('redis outbox, two instances', async () => {
  const stores = await createRedisStores({ url: redis.url, keyPrefix: `${unique('fair')}:` });
  try {
    await scenario(stores, 2);
  } finally {
    await stores.close();
  }
});
