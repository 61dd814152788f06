/**
 * WebhookEvents.observe: a change is reported, at least once, and never lost. Its events are queued
 * before the state is recorded in the snapshot: a crash or a failure in between leaves the change
 * to be reported at the next look.
 * WebhookEvents.emitForWrite: a write's event the stores refused is held and queued again, once.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import pino from 'pino';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import type { EnqueueResult, OutboxEntry } from '../../src/stores/webhook-types.js';
import type { Invoice, Order } from '../../src/v1/schemas.js';
import { WebhookEvents } from '../../src/webhooks/emitter.js';

const ACCOUNT = 'acme';

/** An outbox whose next `failures` enqueues fail, as a store that drops out would. */
/** Every queued event claimable at once (no per-account share: these tests read what was queued). */
class FlakyOutbox extends MemoryWebhookOutbox {
  failures = 0;
  constructor() {
    super(Date.now, { perAccount: Number.MAX_SAFE_INTEGER });
  }
  override async enqueue(entry: Omit<OutboxEntry, 'attempts'>): Promise<EnqueueResult> {
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('outbox unavailable');
    }
    return super.enqueue(entry);
  }
}

async function setUp(held: ConstructorParameters<typeof WebhookEvents>[5] = {}) {
  const store = new MemoryWebhookStore();
  await store.set(ACCOUNT, {
    url: 'https://hooks.example.com/in',
    secret: 'sealed',
    previousSecret: null,
    previousSecretExpiresAt: null,
    updatedAt: new Date().toISOString(),
    status: 'enabled',
    disabledReason: null,
    lastDelivery: null,
    failingSince: null,
    reportFrom: null,
  }, null);
  const outbox = new FlakyOutbox();
  const lines: string[] = [];
  const log = pino({ level: 'error' }, { write: (line: string) => lines.push(line) });
  return { store, outbox, lines, events: new WebhookEvents(store, outbox, log, undefined, undefined, held) };
}

async function queuedTypes(outbox: MemoryWebhookOutbox): Promise<string[]> {
  const claimed = await outbox.claim('test', 100, 60_000);
  return claimed.map((delivery) => (JSON.parse(delivery.body) as { type: string }).type);
}

const order = (status: Order['status']) => ({ id: '12', status }) as unknown as Order;
const invoice = (status: Invoice['status']) => ({ id: '7', status }) as unknown as Invoice;

/** An order seen pending, then active: its status_changed queued, the store failing to record it. */
async function queuedNotRecorded() {
  const fixture = await setUp();
  const { store, events } = fixture;
  await events.observe(ACCOUNT, { kind: 'order', resource: order('pending') });
  const record = store.recordSnapshot.bind(store);
  store.recordSnapshot = async () => {
    throw new Error('store unavailable');
  };
  await assert.rejects(events.observe(ACCOUNT, { kind: 'order', resource: order('active') }), /store unavailable/);
  store.recordSnapshot = record;
  return fixture;
}

t.test('webhook events: observe', async (t) => {
  t.test('the payload carries the event id (the webhook-id it is sent under) and api_version v1 before type', async () => {
    const { outbox, events } = await setUp();
    await events.observe(ACCOUNT, { kind: 'invoice', resource: invoice('paid') });
    const claimed = await outbox.claim('test', 100, 60_000);
    assert.equal(claimed.length, 2, 'invoice.created and invoice.paid');
    for (const { eventId, body } of claimed) {
      const payload = JSON.parse(body) as Record<string, unknown>;
      assert.deepEqual(Object.keys(payload), ['id', 'api_version', 'type', 'timestamp', 'data', 'sequence']);
      assert.deepEqual([payload.id, payload.api_version], [eventId, 'v1']);
    }
  });

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

  t.test('a crash before the event is queued loses nothing: the state is recorded only after', async () => {
    const { store, outbox, events } = await setUp();
    await events.observe(ACCOUNT, { kind: 'order', resource: order('pending') });
    const enqueue = outbox.enqueue.bind(outbox);
    let seenWhileQueueing: Record<string, string> | undefined;
    outbox.enqueue = async (entry) => {
      // A process killed here must leave the change for the next look.
      seenWhileQueueing = await store.readSnapshot(ACCOUNT);
      return enqueue(entry);
    };
    await events.observe(ACCOUNT, { kind: 'order', resource: order('active') });
    assert.deepEqual(seenWhileQueueing, { 'order:12': 'pending' });
    assert.deepEqual(await store.readSnapshot(ACCOUNT), { 'order:12': 'active' });
  });

  t.test('queued but not recorded (a crash, the store failing): the next look reports it again', async () => {
    const { store, outbox, events } = await queuedNotRecorded();
    const [created, first] = await outbox.claim('test', 100, 60_000);
    assert.ok(created && first);
    await outbox.complete(first, 'delivered');
    await events.observe(ACCOUNT, { kind: 'order', resource: order('active') });
    const [again] = await outbox.claim('test', 100, 60_000);
    assert.equal(JSON.parse(again?.body ?? '{}').type, 'order.status_changed', 'reported again: a duplicate, not a loss');
    assert.equal(again?.eventId, first.eventId, 'under the id of the first report, so the receiver can tell');
    assert.deepEqual(await store.readSnapshot(ACCOUNT), { 'order:12': 'active' });
  });

  t.test('a change reported again while its first report still waits is not queued twice', async () => {
    const { store, outbox, events } = await queuedNotRecorded();
    await events.observe(ACCOUNT, { kind: 'order', resource: order('active') });
    assert.deepEqual(await queuedTypes(outbox), ['order.created', 'order.status_changed']);
    assert.deepEqual((await store.listDeliveries(ACCOUNT, 0, 10)).entries.map((entry) => entry.type).sort(), ['order.created', 'order.status_changed']);
  });

  t.test('two observers of one change (a write and the detector) report it under one id', async () => {
    const { outbox, events } = await setUp();
    await events.observe(ACCOUNT, { kind: 'order', resource: order('pending') });
    await outbox.claim('test', 100, 60_000).then((claimed) => Promise.all(claimed.map((delivery) => outbox.complete(delivery, 'delivered'))));
    const enqueue = outbox.enqueue.bind(outbox);
    const ids: string[] = [];
    // The other observer reads the snapshot (still pending) before this one records `active`.
    outbox.enqueue = async (entry) => {
      outbox.enqueue = async (second) => {
        ids.push(second.eventId);
        return enqueue(second);
      };
      ids.push(entry.eventId);
      const added = await enqueue(entry);
      await events.observe(ACCOUNT, { kind: 'order', resource: order('active') });
      return added;
    };
    await events.observe(ACCOUNT, { kind: 'order', resource: order('active') });
    assert.equal(ids.length, 2, 'both observers reported the change');
    assert.equal(ids[0], ids[1]);
    assert.deepEqual(await queuedTypes(outbox), ['order.status_changed'], 'queued once: the second found it waiting');
  });

  t.test('a resource that changes back and forth gets new ids for every change', async () => {
    const { outbox, events } = await setUp();
    for (const status of ['pending', 'active', 'pending', 'active'] as const) await events.observe(ACCOUNT, { kind: 'order', resource: order(status) });
    const claimed = await outbox.claim('test', 100, 60_000);
    assert.equal(claimed.length, 4);
    assert.equal(new Set(claimed.map((delivery) => delivery.eventId)).size, 4);
  });

  t.test('event ids are per account', async () => {
    const { store, outbox, events } = await setUp();
    const other = await store.get(ACCOUNT);
    assert.ok(other);
    await store.set('globex', other, null);
    await events.observe(ACCOUNT, { kind: 'order', resource: order('pending') });
    await events.observe('globex', { kind: 'order', resource: order('pending') });
    const claimed = await outbox.claim('test', 100, 60_000);
    assert.deepEqual(claimed.map((delivery) => delivery.accountId), [ACCOUNT, 'globex'], 'the same order id at two accounts: two events');
    assert.notEqual(claimed[0]?.eventId, claimed[1]?.eventId);
  });

  t.test('a newer state recorded meanwhile is kept: its observer reports from there', async () => {
    const { store, outbox, events } = await setUp();
    await events.observe(ACCOUNT, { kind: 'order', resource: order('pending') });
    const enqueue = outbox.enqueue.bind(outbox);
    // Another observer records `cancelled` while this one queues `active`.
    outbox.enqueue = async (entry) => {
      outbox.enqueue = enqueue;
      const added = await enqueue(entry);
      await events.observe(ACCOUNT, { kind: 'order', resource: order('cancelled') });
      return added;
    };
    await events.observe(ACCOUNT, { kind: 'order', resource: order('active') });
    assert.deepEqual(await store.readSnapshot(ACCOUNT), { 'order:12': 'cancelled' });
    assert.deepEqual(await queuedTypes(outbox), ['order.created', 'order.status_changed', 'order.status_changed']);
  });
});

t.test('webhook events: a write\'s event the stores refuse', async (t) => {
  const quick = { firstRetryMs: 5, longestRetryMs: 20 };
  const until = async (done: () => boolean | Promise<boolean>) => {
    for (const deadline = Date.now() + 5_000; !(await done()); ) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  t.test('is held and queued again once the stores take it: once, with its id and payload', async () => {
    const { outbox, events } = await setUp(quick);
    outbox.failures = 3;
    await events.emitForWrite(ACCOUNT, 'webhook.test', { url: 'https://hooks.example.com/in' });
    assert.equal(events.heldCount, 1, 'the request went on; the event is held');
    await until(() => events.heldCount === 0);
    const claimed = await outbox.claim('test', 100, 60_000);
    assert.equal(claimed.length, 1);
    assert.match(claimed[0]?.eventId ?? '', /^evt_/);
    const { id, api_version, type } = JSON.parse(claimed[0]?.body ?? '{}') as Record<string, unknown>;
    assert.deepEqual({ id, api_version, type }, { id: claimed[0]?.eventId, api_version: 'v1', type: 'webhook.test' }, 'the payload names the id it is sent under');
    await events.close();
  });

  t.test('held events are queued in the order of their writes', async () => {
    const { outbox, events } = await setUp(quick);
    outbox.failures = 2;
    await events.emitForWrite(ACCOUNT, 'webhook.test', { url: 'https://hooks.example.com/1' });
    await events.emitForWrite(ACCOUNT, 'webhook.test', { url: 'https://hooks.example.com/2' });
    await events.emitForWrite(ACCOUNT, 'webhook.test', { url: 'https://hooks.example.com/3' });
    await until(() => events.heldCount === 0);
    const claimed = await outbox.claim('test', 100, 60_000);
    const urls = claimed.map((delivery) => (JSON.parse(delivery.body) as { data: { url: string } }).data.url);
    assert.deepEqual(urls, ['https://hooks.example.com/1', 'https://hooks.example.com/2', 'https://hooks.example.com/3']);
    await events.close();
  });

  t.test('an endpoint removed meanwhile: the held event is dropped, as a new one would be', async () => {
    const { store, outbox, events } = await setUp(quick);
    outbox.failures = 1;
    await events.emitForWrite(ACCOUNT, 'webhook.test', { url: 'https://hooks.example.com/in' });
    await store.clear(ACCOUNT);
    await until(() => events.heldCount === 0);
    assert.deepEqual(await outbox.claim('test', 100, 60_000), []);
    await events.close();
  });

  t.test('beyond the bound, and at a stop with the stores still down, each event is logged as lost', async () => {
    const { outbox, lines, events } = await setUp({ ...quick, most: 2 });
    outbox.failures = Number.POSITIVE_INFINITY;
    for (const n of [1, 2, 3]) await events.emitForWrite(ACCOUNT, 'webhook.test', { url: `https://hooks.example.com/${n}` });
    assert.equal(events.heldCount, 2);
    assert.equal(lines.length, 1);
    assert.match(lines[0] as string, /webhook event lost: 2 events already held/);
    assert.match(lines[0] as string, /"event_type":"webhook.test"/);
    await events.close();
    assert.equal(events.heldCount, 0);
    assert.equal(lines.filter((line) => /webhook event lost: stopped with the stores still refusing it/.test(line)).length, 2);
    for (const line of lines) assert.doesNotMatch(line, /whsec_|sealed/, 'no secret in the log');
  });

  t.test('a stop with the stores back queues what is held', async () => {
    const { outbox, events } = await setUp({ firstRetryMs: 60_000, longestRetryMs: 60_000 });
    outbox.failures = 1;
    await events.emitForWrite(ACCOUNT, 'webhook.test', { url: 'https://hooks.example.com/in' });
    assert.equal(events.heldCount, 1);
    await events.close();
    assert.deepEqual(await queuedTypes(outbox), ['webhook.test']);
  });
});
