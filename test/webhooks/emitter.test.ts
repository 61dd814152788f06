/**
 * WebhookEvents.observe: a change is reported once, and never lost. The snapshot is swapped before
 * the event is queued (so a write and the detector seeing one change report it once); when the
 * queueing fails, the swap is undone, and the next look reports the change.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import pino from 'pino';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import type { OutboxEntry } from '../../src/stores/types.js';
import type { Invoice, Order } from '../../src/v1/schemas.js';
import { WebhookEvents } from '../../src/webhooks/emitter.js';

const ACCOUNT = 'acme';

/** An outbox whose next `failures` enqueues fail, as a store that drops out would. */
class FlakyOutbox extends MemoryWebhookOutbox {
  failures = 0;
  override async enqueue(entry: Omit<OutboxEntry, 'attempts'>): Promise<void> {
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('outbox unavailable');
    }
    return super.enqueue(entry);
  }
}

async function setUp() {
  const store = new MemoryWebhookStore();
  await store.set(ACCOUNT, {
    url: 'https://hooks.example.com/in',
    secret: 'sealed',
    previousSecret: null,
    previousSecretExpiresAt: null,
    updatedAt: new Date().toISOString(),
    status: 'enabled',
    lastDelivery: null,
    failingSince: null,
  });
  const outbox = new FlakyOutbox();
  const lines: string[] = [];
  const log = pino({ level: 'error' }, { write: (line: string) => lines.push(line) });
  return { store, outbox, lines, events: new WebhookEvents(store, outbox, log) };
}

async function queuedTypes(outbox: MemoryWebhookOutbox): Promise<string[]> {
  const claimed = await outbox.claim('test', 100, 60_000);
  return claimed.map((delivery) => (JSON.parse(delivery.body) as { type: string }).type);
}

const order = (status: Order['status']) => ({ id: '12', status }) as unknown as Order;
const invoice = (status: Invoice['status']) => ({ id: '7', status }) as unknown as Invoice;

t.test('webhook events: observe', async (t) => {
  t.test('a change is queued once, however often it is seen', async () => {
    const { outbox, events } = await setUp();
    await events.observe(ACCOUNT, { kind: 'order', resource: order('pending') });
    await events.observe(ACCOUNT, { kind: 'order', resource: order('pending') });
    await events.observe(ACCOUNT, { kind: 'order', resource: order('active') });
    assert.deepEqual(await queuedTypes(outbox), ['order.created', 'order.status_changed']);
  });

  t.test('not queued: the observation is undone, and the next look reports the change', async () => {
    const { store, outbox, events } = await setUp();
    await events.observe(ACCOUNT, { kind: 'order', resource: order('pending') });
    outbox.failures = 1;
    await assert.rejects(events.observe(ACCOUNT, { kind: 'order', resource: order('active') }), /outbox unavailable/);
    assert.deepEqual(await store.readSnapshot(ACCOUNT), { 'order:12': 'pending' }, 'the snapshot still says pending');
    await events.observe(ACCOUNT, { kind: 'order', resource: order('active') });
    assert.deepEqual(await queuedTypes(outbox), ['order.created', 'order.status_changed']);
  });

  t.test('a first sighting not queued is forgotten, so it is reported as new again', async () => {
    const { store, outbox, events } = await setUp();
    outbox.failures = 1;
    await assert.rejects(events.observe(ACCOUNT, { kind: 'order', resource: order('pending') }));
    assert.deepEqual(await store.readSnapshot(ACCOUNT), {});
    await events.observe(ACCOUNT, { kind: 'order', resource: order('pending') });
    assert.deepEqual(await queuedTypes(outbox), ['order.created']);
  });

  t.test('an invoice first seen paid: created queued, paid not; only paid is reported again', async () => {
    const { outbox, events } = await setUp();
    // The first enqueue passes, the second fails.
    const enqueue = outbox.enqueue.bind(outbox);
    let calls = 0;
    outbox.enqueue = async (entry) => {
      calls += 1;
      if (calls === 2) throw new Error('outbox unavailable');
      return enqueue(entry);
    };
    await assert.rejects(events.observe(ACCOUNT, { kind: 'invoice', resource: invoice('paid') }));
    await events.observe(ACCOUNT, { kind: 'invoice', resource: invoice('paid') });
    assert.deepEqual(await queuedTypes(outbox), ['invoice.created', 'invoice.paid']);
  });

  t.test('a newer state seen meanwhile is kept: its observer reports from there', async () => {
    const { store, outbox, events } = await setUp();
    await events.observe(ACCOUNT, { kind: 'order', resource: order('pending') });
    const swap = store.swapSnapshot.bind(store);
    // Another observer records `cancelled` between this one's swap and its failed enqueue.
    store.swapSnapshot = async (accountId, resource, state) => {
      const previous = await swap(accountId, resource, state);
      store.swapSnapshot = swap;
      await swap(accountId, resource, 'cancelled');
      return previous;
    };
    outbox.failures = 1;
    await assert.rejects(events.observe(ACCOUNT, { kind: 'order', resource: order('active') }));
    assert.deepEqual(await store.readSnapshot(ACCOUNT), { 'order:12': 'cancelled' });
    assert.deepEqual(await queuedTypes(outbox), ['order.created']);
  });

  t.test('the undo failing too is logged as a lost event', async () => {
    const { store, outbox, lines, events } = await setUp();
    await events.observe(ACCOUNT, { kind: 'order', resource: order('pending') });
    store.restoreSnapshot = async () => {
      throw new Error('store unavailable');
    };
    outbox.failures = 1;
    await assert.rejects(events.observe(ACCOUNT, { kind: 'order', resource: order('active') }), /outbox unavailable/);
    assert.equal(lines.length, 1);
    assert.match(lines[0] as string, /webhook event lost/);
    assert.match(lines[0] as string, /order:12/);
  });
});
