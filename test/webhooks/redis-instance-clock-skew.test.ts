/**
 * Two gateway instances on one Redis, instance B's clock 3 s behind the detector's. What B's write
 * records is stamped, and the detector's read timed, by Redis's clock (TIME): the detector's read
 * from before B's write is not reported as a change back.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import pino from 'pino';
import type { Backend } from '../../src/backend/backend.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import type { AccountRecord, KeyStore } from '../../src/stores/types.js';
import type { Order, Service } from '../../src/v1/schemas.js';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import { ChangeDetector } from '../../src/webhooks/detector.js';
import { WebhookEvents } from '../../src/webhooks/emitter.js';
import { startRedisServer } from '../helpers/redis.js';
import { unique, webhookRecord } from '../stores/conformance.js';

const ACCOUNT = 'acme';
const log = pino({ level: 'silent' });
const order = (status: Order['status']) => ({ id: '12', status }) as unknown as Order;

t.test("redis: a write on an instance whose clock runs 3 s behind the detector's is not taken back", async (t) => {
  const server = await startRedisServer();
  const stores = await createRedisStores({ url: server.url, keyPrefix: `${unique('skew')}:` });
  t.teardown(async () => {
    await stores.close();
    await server.stop();
  });
  const store = stores.webhooks;
  await store.set(ACCOUNT, webhookRecord('https://hooks.example.com/in', 'sealed', new Date().toISOString()), null);
  const outbox = new MemoryWebhookOutbox();
  const writer = new WebhookEvents(store, outbox, log, undefined, () => Date.now() - 3_000);
  let current = order('pending');
  let duringRead: (() => Promise<void>) | null = null;
  const upstream = {
    listServices: async () => ({ items: [{ id: '12', status: 'pending', order_id: '12' } as unknown as Service], total: 1 }),
    listInvoices: async () => ({ items: [], total: 0 }),
    async getOrder() {
      const seen = current;
      const write = duringRead;
      duringRead = null;
      await write?.();
      return seen;
    },
  };
  const account: AccountRecord = { id: ACCOUNT, name: 'Acme', upstreamId: '1', createdAt: new Date().toISOString() };
  const keys = { listAccounts: async () => [account] } as unknown as KeyStore;
  const detector = new ChangeDetector({
    backend: upstream as unknown as Backend,
    keys,
    store,
    events: new WebhookEvents(store, outbox, log),
    pollIntervalMs: 60_000,
    log,
  });
  await detector.tick();

  // While the detector's read of the order (pending) is in flight, B activates it upstream (which
  // takes a few ms) and records it active.
  duringRead = async () => {
    await sleep(5);
    current = order('active');
    await writer.observe(ACCOUNT, { kind: 'order', resource: order('active') });
  };
  await detector.tick();
  await detector.tick();

  const reported = [];
  for (let batch = await outbox.claim('test', 100, 60_000); batch.length > 0; batch = await outbox.claim('test', 100, 60_000)) {
    for (const delivery of batch) await outbox.complete(delivery, 'delivered');
    reported.push(...batch.map((delivery) => JSON.parse(delivery.body) as { type: string; data: { status: string } }).map(({ type, data }) => `${type} ${data.status}`));
  }
  assert.deepEqual(reported, ['order.status_changed active'], 'one change to active; no change back to pending, then forward again');
});
