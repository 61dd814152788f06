/**
 * An account whose receiver hangs or crawls for days: its line in the outbox is bounded
 * (webhooks.maxWaitingPerAccount). An event refused there is not kept, and never silently: it is
 * counted as lost (`backlog_full`), logged once then counted, and listed in the account's delivery
 * log as dropped with why, from where the operator can replay it once the line has room.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import pino from 'pino';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import type { WebhookLossReason } from '../../src/ops/observers.js';
import { WebhookEvents } from '../../src/webhooks/emitter.js';

const ACCOUNT = 'acme';

t.test("an event refused by a full line is counted lost, logged, and listed as dropped", async () => {
  const store = new MemoryWebhookStore();
  const record = {
    url: 'https://hooks.example.com/in',
    secret: 'sealed',
    previousSecret: null,
    previousSecretExpiresAt: null,
    updatedAt: new Date().toISOString(),
    status: 'enabled' as const,
    disabledReason: null,
    lastDelivery: null,
    failingSince: null,
    reportFrom: null,
  };
  await store.set(ACCOUNT, record, null);
  const outbox = new MemoryWebhookOutbox(Date.now, { perAccount: 1, maxWaiting: 2 });
  const lines: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
  const lost: WebhookLossReason[] = [];
  const events = new WebhookEvents(store, outbox, log, undefined, undefined, { onLost: (reason) => lost.push(reason) });
  for (let index = 0; index < 5; index += 1) await events.emitForWrite(ACCOUNT, 'webhook.test', { url: record.url });
  assert.equal((await outbox.backlog()).depth, 3, 'one up for delivery, two waiting');
  assert.deepEqual(lost, ['backlog_full', 'backlog_full']);
  const { entries } = await store.listDeliveries(ACCOUNT, 0, 10);
  const dropped = entries.filter((entry) => entry.state === 'dropped');
  assert.equal(dropped.length, 2, 'the operator sees them');
  assert.match(dropped[0]?.lastError ?? '', /waiting/);
  assert.equal(lines.filter((line) => line.includes('webhook event lost')).length, 1, 'logged once, then counted');

  // The operator's replay of a dropped one: refused while the line is full, queued once it has room.
  assert.equal(await events.replay(ACCOUNT, dropped[0]!), null, 'nothing queued while full');
  const [sending] = await outbox.claim('worker', 1, 60_000);
  await outbox.complete(sending!, 'delivered');
  assert.equal((await events.replay(ACCOUNT, dropped[0]!))?.state, 'pending');
  assert.equal((await outbox.backlog()).depth, 3);
  await events.close();
});
