/**
 * An account's share of the webhook outbox (perAccountConcurrency, 2 by default) holds for every
 * instance together: whatever one instance may claim of an account, another may not claim more
 * beside it, or the receiver gets more deliveries at once than its share. The share holds after a
 * delivery ends (its next ones admitted) and after a retry comes back; and an entry put back in
 * line while none of its account's is left in the outbox is claimable again at once, not after the
 * sweep (claimIdleMs, 30 s by default). Memory and Redis outboxes alike.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import type { WebhookOutbox } from '../../src/stores/webhook-types.js';
import { unique } from '../stores/conformance.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';

/** Longer than the test: no claim is taken over, no parked account swept. */
const IDLE_MS = 60_000;

const entry = (eventId: string) => ({ eventId, accountId: 'acct', body: `{"id":"${eventId}"}`, trace: {} });
const ids = (claimed: Array<{ eventId: string }>) => claimed.map((delivery) => delivery.eventId);

let redis: RedisServer;
t.before(async () => {
  redis = await startRedisServer();
});
t.teardown(async () => {
  await redis.stop();
});

function scenarios(name: string, outbox: () => Promise<{ outbox: WebhookOutbox; close(): Promise<void> }>): void {
  const test = (title: string, body: (outbox: WebhookOutbox) => Promise<void>) =>
    t.test(`${name}: ${title}`, async () => {
      const opened = await outbox();
      try {
        await body(opened.outbox);
      } finally {
        await opened.close();
      }
    });

  test('a delivery that ends lets one more of its account in, not two', async (outbox) => {
    for (const id of ['evt_1', 'evt_2', 'evt_3', 'evt_4', 'evt_5']) await outbox.enqueue(entry(id));
    const [first, second] = await outbox.claim('instance-a', 10, IDLE_MS);
    assert.deepEqual(ids([first!, second!]), ['evt_1', 'evt_2']);
    await outbox.complete(first!, 'delivered');
    assert.deepEqual(ids(await outbox.claim('instance-b', 10, IDLE_MS)), ['evt_3'], 'evt_2 is still being delivered: one slot is free');
    await outbox.complete(second!, 'delivered');
    assert.deepEqual(ids(await outbox.claim('instance-c', 10, IDLE_MS)), ['evt_4']);
  });

  test('a retry back in the outbox counts in its account\'s share', async (outbox) => {
    await outbox.enqueue(entry('evt_1'));
    const [first] = await outbox.claim('instance-a', 10, IDLE_MS);
    await outbox.reschedule(first!, 0);
    await outbox.enqueue(entry('evt_2'));
    // The retry comes back beside evt_2: the account's share (two) is taken.
    assert.deepEqual(ids(await outbox.claim('instance-a', 10, IDLE_MS)).sort(), ['evt_1', 'evt_2']);
    await outbox.enqueue(entry('evt_3'));
    assert.deepEqual(await outbox.claim('instance-b', 10, IDLE_MS), [], 'two of the account\'s are being delivered: evt_3 waits');
  });

  test('put back while none of its account\'s is left: claimable again at once', async (outbox) => {
    for (const id of ['evt_1', 'evt_2']) await outbox.enqueue(entry(id));
    const [first, second] = await outbox.claim('instance-a', 10, IDLE_MS);
    await outbox.complete(first!, 'delivered');
    // Its instance had the account's share in flight as it claimed it; that delivery has ended since.
    await outbox.park(second!);
    const again = await outbox.claim('instance-b', 10, IDLE_MS);
    assert.deepEqual(again.map((delivery) => [delivery.eventId, delivery.attempts]), [['evt_2', 0]]);
  });
}

scenarios('memory outbox', async () => {
  const stores = createMemoryStores();
  return { outbox: stores.webhookOutbox, close: () => stores.close() };
});

scenarios('redis outbox', async () => {
  const stores = await createRedisStores({ url: redis.url, keyPrefix: `${unique('share')}:` });
  return { outbox: stores.webhookOutbox, close: () => stores.close() };
});
