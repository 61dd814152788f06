/**
 * An account that is gone while its webhook endpoint is still stored (a deletion whose last
 * clean-up failed, an endpoint set between the deletion's two clean-ups, an account deleted by the
 * key CLI beside a gateway on the memory stores): its events are dropped unsent, and the endpoint
 * with its secrets is forgotten, never delivered to.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import t from 'tap';
import { WebhookConfigSchema } from '../../src/config.js';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { DeliveryWorker } from '../../src/webhooks/worker.js';
import { webhookRecord } from '../stores/conformance.js';
import { eventually } from '../helpers/webhook-receiver.js';

t.test("a deleted account's endpoint left stored is not delivered to, and is forgotten", async (t) => {
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
  // The endpoint is still there; the account is not.
  await store.set('gone', webhookRecord(url, box.seal(`whsec_${randomBytes(32).toString('base64')}`), new Date().toISOString()), null);
  await outbox.enqueue({ eventId: 'evt_1', accountId: 'gone', body: '{"type":"webhook.test"}', trace: {}, numbered: true });
  const outcomes: string[] = [];
  const worker = new DeliveryWorker({
    outbox,
    store,
    accounts: { getAccount: async () => null },
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
  assert.equal(received, 0, "nothing sent to the deleted account's URL");
  assert.deepEqual(outcomes, ['dropped']);
  assert.equal(await store.get('gone'), null, 'the endpoint and its secrets forgotten');
  assert.equal(await store.getDelivery('gone', 'evt_1'), null, 'no delivery logged for it');
});
