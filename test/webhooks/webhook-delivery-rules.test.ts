/**
 * What the delivery worker signs with and what it counts as delivered (Standard Webhooks, reference
 * W-rules):
 * - only a 2xx answer delivers an event: a 300 (or any 3xx, never followed) is a failed attempt,
 *   retried, as a receiver that moved without telling would otherwise lose every event;
 * - an event queued for an endpoint that is disabled since (410, failing, the operator) is dropped
 *   unsent, not delivered to a URL the reseller's integration was cut off from;
 * - after a secret rotation the previous secret signs too, but only until its overlap ends: a
 *   secret that was rotated away (perhaps because it leaked) must stop producing valid signatures.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import t, { type Test } from 'tap';
import { Webhook } from 'standardwebhooks';
import { WebhookConfigSchema } from '../../src/config.js';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import type { DeliveryLogEntry, WebhookRecord } from '../../src/stores/webhook-types.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { DeliveryWorker } from '../../src/webhooks/worker.js';
import { webhookRecord } from '../stores/conformance.js';
import { eventually } from '../helpers/webhook-receiver.js';
import { LIVE_ACCOUNTS } from '../helpers/worker-harness.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const CURRENT = `whsec_${randomBytes(32).toString('base64')}`;
const PREVIOUS = `whsec_${randomBytes(32).toString('base64')}`;

/** One event to one endpoint answering `status`; returns its log entry after the first attempt and the headers it got. */
async function deliverOnce(t: Test, status: number, record: (box: SecretBox, url: string) => WebhookRecord) {
  const received: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    received.push(request.headers);
    request.resume().on('end', () => response.writeHead(status).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const store = new MemoryWebhookStore();
  const outbox = new MemoryWebhookOutbox();
  const box = new SecretBox(randomBytes(32));
  const at = new Date(NOW).toISOString();
  await store.set('acme', record(box, url), null);
  const body = JSON.stringify({ type: 'webhook.test', timestamp: at, data: {} });
  await outbox.enqueue({ eventId: 'evt_review1', accountId: 'acme', body, trace: {} });
  await store.logDelivery('acme', { eventId: 'evt_review1', type: 'webhook.test', state: 'pending', attempts: 0, lastStatus: null, lastAttemptAt: null, nextAttemptAt: null, createdAt: at, body }, 10);
  const worker = new DeliveryWorker({
    outbox,
    store,
    accounts: LIVE_ACCOUNTS,
    box,
    config: WebhookConfigSchema.parse({ allowPrivateTargets: true, workerIntervalMs: 20 }),
    transport: { resolve: async () => ['127.0.0.1'], allowPrivateTargets: true },
    log: pino({ level: 'silent' }),
    now: () => NOW,
  });
  worker.start();
  try {
    const entry = await eventually(async () => {
      const logged = await store.getDelivery('acme', 'evt_review1');
      return logged && (logged.attempts > 0 || logged.state !== 'pending') ? logged : undefined;
    }, 'the first attempt');
    return { entry: entry as DeliveryLogEntry, headers: received[0] as IncomingHttpHeaders, body, received };
  } finally {
    await worker.stop();
  }
}

t.test('a 300 answer does not deliver the event: it is retried', async (t) => {
  const { entry } = await deliverOnce(t, 300, (box, url) => webhookRecord(url, box.seal(CURRENT), new Date(NOW).toISOString()));
  assert.equal(entry.lastStatus, 300);
  assert.equal(entry.state, 'pending', 'to be retried, not delivered');
  assert.notEqual(entry.nextAttemptAt, null);
});

t.test('a 299 answer delivers it', async (t) => {
  const { entry } = await deliverOnce(t, 299, (box, url) => webhookRecord(url, box.seal(CURRENT), new Date(NOW).toISOString()));
  assert.equal(entry.state, 'delivered');
});

t.test('during the overlap both secrets sign; after it only the current one', async (t) => {
  const rotated = (expiresAt: number) => (box: SecretBox, url: string): WebhookRecord => ({
    ...webhookRecord(url, box.seal(CURRENT), new Date(NOW).toISOString()),
    previousSecret: box.seal(PREVIOUS),
    previousSecretExpiresAt: new Date(expiresAt).toISOString(),
  });
  const verifies = (secret: string, delivery: { headers: IncomingHttpHeaders; body: string }) => {
    try {
      new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
      return true;
    } catch {
      return false;
    }
  };

  const during = await deliverOnce(t, 200, rotated(NOW + 3_600_000));
  assert.equal(String(during.headers['webhook-signature']).split(' ').length, 2);

  const after = await deliverOnce(t, 200, rotated(NOW - 1));
  assert.equal(String(after.headers['webhook-signature']).split(' ').length, 1, 'one signature: the expired secret no longer signs');
  // The library checks the timestamp against the real clock: compare the signatures themselves.
  const expected = new Webhook(CURRENT).sign('evt_review1', new Date(Number(after.headers['webhook-timestamp']) * 1000), after.body);
  assert.equal(after.headers['webhook-signature'], expected);
  assert.equal(verifies(PREVIOUS, after), false);
});

t.test('an event for a disabled endpoint is dropped unsent', async (t) => {
  const { entry, received } = await deliverOnce(t, 200, (box, url) => ({
    ...webhookRecord(url, box.seal(CURRENT), new Date(NOW).toISOString()),
    status: 'disabled',
    disabledReason: 'gone',
  }));
  assert.equal(entry.state, 'dropped');
  assert.equal(received.length, 0, 'nothing was sent');
});
