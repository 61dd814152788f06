/**
 * Events carry their account's sequence number (`sequence`) in the signed body, so a receiver can
 * tell it missed one (a gap) and put events that came out of order back in order. A dropped event
 * takes its number and is logged with it; a replay keeps the number it was logged with.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import pino from 'pino';
import { z } from 'zod';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import { WebhookEvents } from '../../src/webhooks/emitter.js';
import { eventPayloadSchema } from '../../src/webhooks/events.js';
import { webhookRecord } from '../stores/conformance.js';

const ACCOUNT = 'acme';

const sequenceOf = (body: string | undefined) => (body === undefined ? undefined : (JSON.parse(body) as { sequence?: number }).sequence);

t.test('queued, dropped and replayed events carry their number in the logged and delivered body', async () => {
  const store = new MemoryWebhookStore();
  await store.set(ACCOUNT, webhookRecord('https://hooks.example.com/in', 'sealed', new Date().toISOString()), null);
  // One delivery at a time and one waiting: the third event is dropped.
  const outbox = new MemoryWebhookOutbox(Date.now, { perAccount: 1, maxWaiting: 1 });
  const lost: string[] = [];
  const events = new WebhookEvents(store, outbox, pino({ level: 'silent' }), undefined, undefined, { onLost: (reason) => lost.push(reason) });
  for (const url of ['https://a.example.com', 'https://b.example.com', 'https://c.example.com']) await events.emitForWrite(ACCOUNT, 'webhook.test', { url });
  assert.deepEqual(lost, ['backlog_full']);
  const { entries } = await store.listDeliveries(ACCOUNT, 0, 10);
  const byUrl = new Map(entries.map((entry) => [(JSON.parse(entry.body) as { data: { url: string } }).data.url, entry]));
  assert.deepEqual(
    ['https://a.example.com', 'https://b.example.com', 'https://c.example.com'].map((url) => [byUrl.get(url)?.state, sequenceOf(byUrl.get(url)?.body)]),
    [['pending', 1], ['pending', 2], ['dropped', 3]],
    'each logged body carries its number; the dropped one too, so the receiver sees 3 missing',
  );
  const [first] = await outbox.claim('worker', 10, 60_000);
  assert.equal(first?.body, byUrl.get('https://a.example.com')?.body, 'the body delivered is the one logged');
  await outbox.complete(first!, 'delivered');
  const replayed = await events.replay(ACCOUNT, byUrl.get('https://c.example.com')!);
  assert.equal(sequenceOf(replayed?.body), 3, 'a replay keeps its original number');
  await outbox.complete((await outbox.claim('worker', 10, 60_000))[0]!, 'delivered');
  const [again] = await outbox.claim('worker', 10, 60_000);
  assert.equal(again?.body, byUrl.get('https://c.example.com')?.body, 'the replay is sent byte for byte as logged');
  await events.emitForWrite(ACCOUNT, 'webhook.test', { url: 'https://d.example.com' });
  const latest = (await store.listDeliveries(ACCOUNT, 0, 10)).entries.find((entry) => entry.body.includes('d.example.com'));
  assert.equal(sequenceOf(latest?.body), 4, 'the replay took no new number');
});

t.test('the OpenAPI event schemas document `sequence`, optional (absent from events of a release without it)', async () => {
  type Described = { properties: Record<string, { type?: string; minimum?: number }>; required: string[] };
  const document = z.toJSONSchema(eventPayloadSchema('order.created'), { io: 'output' }) as { $defs: Record<string, Described> };
  const schema = document.$defs.Event_order_created!;
  assert.deepEqual([schema.properties.sequence?.type, schema.properties.sequence?.minimum], ['integer', 1]);
  assert.ok(!schema.required.includes('sequence'));
});
