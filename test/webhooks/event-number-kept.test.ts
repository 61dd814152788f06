/**
 * An event queued again after its first copy was delivered keeps its number: the enqueue whose reply
 * was lost (a command timeout after the script ran) is retried by HeldEvents a second later, and the
 * change detector reports an unrecorded change again under the same event id. A receiver that drops
 * the second copy by its webhook-id must not see a new number, which would be a gap that no lost
 * event explains.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import type { WebhookOutbox } from '../../src/stores/webhook-types.js';
import { unique } from '../stores/conformance.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';

let server: RedisServer;
t.before(async () => {
  server = await startRedisServer();
});
t.teardown(() => server.stop());

const event = (eventId: string) => ({ eventId, accountId: 'acme', body: `{"id":"${eventId}"}`, trace: {}, numbered: true });

async function deliverAll(outbox: WebhookOutbox): Promise<string[]> {
  const bodies: string[] = [];
  for (const delivery of await outbox.claim('worker', 10, 30_000)) {
    bodies.push(delivery.body);
    await outbox.complete(delivery, 'delivered');
  }
  return bodies;
}

async function runOn(outbox: WebhookOutbox): Promise<void> {
  await outbox.enqueue(event('evt_1'));
  assert.deepEqual(await deliverAll(outbox), ['{"id":"evt_1","sequence":1}']);
  const again = await outbox.enqueue(event('evt_1'));
  assert.deepEqual(again, { outcome: 'queued', body: '{"id":"evt_1","sequence":1}' }, 'the same event queued again keeps its number');
  await outbox.enqueue(event('evt_2'));
  assert.deepEqual(await deliverAll(outbox), ['{"id":"evt_1","sequence":1}', '{"id":"evt_2","sequence":2}'], 'the next event takes the next number: no gap');
}

t.test('redis: an event queued again after delivery keeps its number', async () => {
  const stores = await createRedisStores({ url: server.url, keyPrefix: `${unique('kept-number')}:` });
  try {
    await runOn(stores.webhookOutbox);
  } finally {
    await stores.close();
  }
});

t.test('memory: the same', async () => {
  await runOn(new MemoryWebhookOutbox(Date.now));
});
