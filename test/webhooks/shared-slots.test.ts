/**
 * An instance whose claimed entries find the account's shared slots all held elsewhere parks them
 * until one of the account's deliveries ends; it must not cycle the account's whole backlog back to
 * back (Redis churn, and the account's events reordered), every interval.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import pino from 'pino';
import { WebhookConfigSchema } from '../../src/config.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import type { WebhookOutbox } from '../../src/stores/webhook-types.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { DeliveryWorker } from '../../src/webhooks/worker.js';
import { unique, webhookRecord } from '../stores/conformance.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { LIVE_ACCOUNTS } from '../helpers/worker-harness.js';

const BACKLOG = 400;
const INTERVAL_MS = 200;

t.test('a slot held by another instance: entries parked, not cycled back to back', async () => {
  const stores = createMemoryStores();
  const box = new SecretBox(randomBytes(32));
  const slow = await startReceiver();
  let answerSlow = (): void => undefined;
  const hanging = new Promise<void>((resolve) => (answerSlow = resolve));
  slow.answer = () => hanging.then(() => ({ status: 200 }));
  const config = WebhookConfigSchema.parse({ allowPrivateTargets: true, workerIntervalMs: INTERVAL_MS, retryScheduleMs: [0, 60_000] });
  let parked = 0;
  const counted: WebhookOutbox = Object.create(stores.webhookOutbox, {
    park: { value: (...args: Parameters<WebhookOutbox['park']>) => ((parked += 1), stores.webhookOutbox.park(...args)) },
  });
  const worker = (outbox: WebhookOutbox) =>
    new DeliveryWorker({ outbox, store: stores.webhooks, accounts: LIVE_ACCOUNTS, box, config, transport: { resolve: async () => ['127.0.0.1'], allowPrivateTargets: true }, log: pino({ level: 'silent' }) });
  const first = worker(stores.webhookOutbox);
  const second = worker(counted);
  try {
    const account = unique('slowco');
    await stores.webhooks.set(account, webhookRecord(slow.url, box.seal('whsec_dGVzdA=='), new Date().toISOString()), null);
    for (let index = 0; index < BACKLOG; index += 1) {
      await stores.webhookOutbox.enqueue({ eventId: `evt_s${index}`, accountId: account, body: JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: {} }), trace: {} });
    }
    first.start();
    await slow.waitFor(() => slow.received.length >= 2, 'the first instance holding both slots', 5_000);
    second.start();
    // Five intervals: one claim each (8 entries at most) is what the second instance's own surplus costs.
    await sleep(5 * INTERVAL_MS + INTERVAL_MS / 2);
    assert.equal(slow.received.length, 2, 'the account still holds its two slots, no more');
    assert.ok(parked <= 6 * config.concurrency, `the second instance parked ${parked} entries in 5 intervals (a backlog of ${BACKLOG})`);
  } finally {
    answerSlow();
    await Promise.all([first.stop(), second.stop()]);
    await slow.close();
    await stores.close();
  }
});
