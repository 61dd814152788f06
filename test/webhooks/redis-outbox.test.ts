/**
 * The Redis outbox after Redis loses its data (a restart without persistence, a flush): the
 * consumer group is gone with the stream, and the outbox makes it again instead of failing every
 * claim with NOGROUP until the process restarts.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { Redis } from 'ioredis';
import { createRedisStores } from '../../src/stores/redis/index.js';
import type { Stores } from '../../src/stores/types.js';
import { unique } from '../stores/conformance.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';
import { eventually } from '../helpers/webhook-receiver.js';

let server: RedisServer;
t.before(async () => {
  server = await startRedisServer();
});
t.teardown(async () => {
  await server.stop();
});

const entry = (eventId: string) => ({ eventId, accountId: 'acme', body: '{}', trace: {} });

async function withStores(body: (stores: Stores) => Promise<void>): Promise<void> {
  const stores = await createRedisStores({ url: server.url, keyPrefix: `${unique('outbox')}:` });
  try {
    await body(stores);
  } finally {
    await stores.close();
  }
}

/** Delivers one event, so that the group exists and the outbox knows it. */
async function deliverOne(stores: Stores): Promise<void> {
  await stores.webhookOutbox.enqueue(entry('evt_before'));
  const [claimed] = await stores.webhookOutbox.claim('a', 10, 30_000);
  assert.equal(claimed?.eventId, 'evt_before');
  await stores.webhookOutbox.complete(claimed!, 'delivered');
}

t.test('redis webhook outbox: the consumer group is made again when Redis lost it', async (t) => {
  t.test('after FLUSHALL, new events are claimed', async () => {
    await withStores(async (stores) => {
      await deliverOne(stores);
      const admin = new Redis(server.url);
      await admin.flushall();
      admin.disconnect();
      await stores.webhookOutbox.enqueue(entry('evt_after'));
      assert.deepEqual((await stores.webhookOutbox.claim('a', 10, 30_000)).map((d) => d.eventId), ['evt_after']);
      assert.deepEqual(await stores.webhookOutbox.claim('a', 10, 30_000), [], 'claimed once');
    });
  });

  t.test('after a restart with no data, claims work (nothing to claim until an event comes)', async () => {
    await withStores(async (stores) => {
      await deliverOne(stores);
      await server.restart();
      assert.deepEqual(await eventually(() => stores.webhookOutbox.claim('a', 10, 30_000).catch(() => undefined), 'a claim after the restart'), []);
      await stores.webhookOutbox.enqueue(entry('evt_after'));
      assert.deepEqual((await stores.webhookOutbox.claim('a', 10, 30_000)).map((d) => d.eventId), ['evt_after']);
    });
  });
});
