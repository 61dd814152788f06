/**
 * An account's line in the webhook outbox, memory and Redis alike.
 *
 * The bound on events waiting (webhooks.maxWaitingPerAccount) is each account's
 * own. An account whose receiver hangs fills its line; another account, whose share is busy too,
 * still has its next events kept. Counting every account's waiting events against the bound
 * (outbox-line.lua's parkedCount) lost the second tenant's events as `backlog_full`,
 * while the existing test only enqueued the other account's events within its share.
 *
 * A new event goes behind the account's waiting ones, also when one of them was put back (park: its
 * delivery slot was taken) and the account has room in its share: admitted at once, it was sent
 * before the event put back, out of order (the memory outbox only looked at its share).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import type { WebhookOutbox } from '../../src/stores/webhook-types.js';
import { startRedisServer } from '../helpers/redis.js';
import { unique } from '../stores/conformance.js';

const entry = (eventId: string, accountId: string) => ({ eventId, accountId, body: '{}', trace: {} });

async function fillOneThenAnother(outbox: WebhookOutbox): Promise<void> {
  // acme: 2 up for delivery, 2 waiting: its line is full.
  for (const id of ['a1', 'a2', 'a3', 'a4']) assert.equal((await outbox.enqueue(entry(id, 'acme'))).outcome, 'queued', id);
  assert.equal((await outbox.enqueue(entry('a5', 'acme'))).outcome, 'full');
  // beta: its share busy, its next two wait in its own line.
  for (const id of ['b1', 'b2', 'b3', 'b4']) assert.equal((await outbox.enqueue(entry(id, 'beta'))).outcome, 'queued', `${id}: beta's line is its own`);
  assert.equal((await outbox.enqueue(entry('b5', 'beta'))).outcome, 'full');
}

async function putBackThenNew(outbox: WebhookOutbox): Promise<void> {
  for (const id of ['c1', 'c2']) await outbox.enqueue(entry(id, 'carol'));
  const [first, second] = await outbox.claim('worker', 2, 60_000);
  assert.deepEqual([first?.eventId, second?.eventId], ['c1', 'c2']);
  await outbox.park(first!);
  assert.equal((await outbox.enqueue(entry('c3', 'carol'))).outcome, 'queued');
  assert.deepEqual(await outbox.claim('worker', 10, 60_000), [], 'c3 waits behind c1');
  await outbox.complete(second!, 'delivered');
  assert.deepEqual((await outbox.claim('worker', 10, 60_000)).map((each) => each.eventId), ['c1', 'c3'], 'in order');
}

const admission = { perAccount: 2, maxWaiting: 2 };

t.test('memory: one account\'s full line does not refuse another\'s events', async () => {
  await fillOneThenAnother(new MemoryWebhookOutbox(Date.now, admission));
});

t.test('memory: a new event waits behind one put back', async () => {
  await putBackThenNew(new MemoryWebhookOutbox(Date.now, admission));
});

t.test('Redis: one account\'s full line does not refuse another\'s events; a new event waits behind one put back', async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  for (const scenario of [fillOneThenAnother, putBackThenNew]) {
    const stores = await createRedisStores({ url: redis.url, keyPrefix: `${unique('line')}:`, webhookAdmission: { ...admission, sweepAfterMs: 30_000 } });
    try {
      await scenario(stores.webhookOutbox);
    } finally {
      await stores.close();
    }
  }
});
