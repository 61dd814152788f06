/**
 * Events still queued for an account that is deleted: each is dropped unsent, counted (deliveries
 * `dropped`) and leaves the outbox, its waiting line included; none is sent to the URL the account
 * had. So too where its endpoint is still stored (a deletion whose last clean-up failed, an
 * endpoint set between the deletion's two clean-ups, an account deleted by the key CLI beside a
 * gateway on the memory stores): the endpoint with its secrets is then forgotten, never delivered to.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import t, { type Test } from 'tap';
import { WebhookConfigSchema } from '../../src/config.js';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { DeliveryWorker } from '../../src/webhooks/worker.js';
import { webhookRecord } from '../stores/conformance.js';
import { eventually } from '../helpers/webhook-receiver.js';

/**
 * An account `id` with an endpoint and `events` queued, then deleted (its webhook data forgotten
 * unless `endpointLeft`); a worker runs until the outbox is empty.
 */
async function deliverAfterDeletion(t: Test, id: string, events: string[], endpointLeft: boolean) {
  let received = 0;
  const server = createServer((request, response) => {
    received += 1;
    request.resume().on('end', () => response.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const store = new MemoryWebhookStore();
  const outbox = new MemoryWebhookOutbox();
  const box = new SecretBox(randomBytes(32));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  await store.set(id, webhookRecord(url, box.seal(`whsec_${randomBytes(32).toString('base64')}`), new Date().toISOString()), null);
  for (const eventId of events) await outbox.enqueue({ eventId, accountId: id, body: '{"type":"webhook.test"}', trace: {}, numbered: true });
  if (!endpointLeft) await store.forgetAccount(id); // what deleting the account does to its webhook data
  const outcomes: string[] = [];
  const worker = new DeliveryWorker({
    outbox,
    store,
    accounts: { getAccount: async () => null }, // the account is gone
    box,
    config: WebhookConfigSchema.parse({ allowPrivateTargets: true, workerIntervalMs: 20 }),
    transport: { resolve: async () => ['127.0.0.1'], allowPrivateTargets: true },
    log: pino({ level: 'silent' }),
    onAttempt: (outcome) => outcomes.push(outcome),
  });
  worker.start();
  try {
    await eventually(async () => ((await outbox.backlog()).depth === 0 ? true : undefined), 'the outbox emptied');
  } finally {
    await worker.stop();
  }
  return { store, outbox, outcomes, received: () => received };
}

t.test("a deleted account's queued events are dropped, counted and gone, none sent", async (t) => {
  // Two up for delivery (its share), one waiting behind them.
  const { outbox, outcomes, received } = await deliverAfterDeletion(t, 'leaving', ['evt_1', 'evt_2', 'evt_3'], false);
  assert.deepEqual(outcomes, ['dropped', 'dropped', 'dropped'], 'each counted as dropped');
  assert.equal(received(), 0, 'none sent to the URL the account had');
  assert.deepEqual(await outbox.claim('later', 10, 0), [], 'nothing left to claim, nor waiting');
});

t.test("a deleted account's endpoint left stored is not delivered to, and is forgotten", async (t) => {
  const { store, outcomes, received } = await deliverAfterDeletion(t, 'gone', ['evt_1'], true);
  assert.equal(received(), 0, "nothing sent to the deleted account's URL");
  assert.deepEqual(outcomes, ['dropped']);
  assert.equal(await store.get('gone'), null, 'the endpoint and its secrets forgotten');
  assert.equal(await store.getDelivery('gone', 'evt_1'), null, 'no delivery logged for it');
});
