/**
 * Retry-After (reference W7): a receiver answering 429/502/503/504 with Retry-After is retried at
 * the later of the schedule and its Retry-After, capped at the schedule's longest step; other
 * statuses keep the schedule.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import pino from 'pino';
import { WebhookConfigSchema } from '../../src/config.js';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { parseRetryAfter } from '../../src/webhooks/transport.js';
import { DeliveryWorker } from '../../src/webhooks/worker.js';
import { webhookRecord } from '../stores/conformance.js';
import { eventually } from '../helpers/webhook-receiver.js';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const HOUR = 3_600_000;

t.test('parseRetryAfter: delay-seconds or an HTTP-date, else nothing', async () => {
  assert.equal(parseRetryAfter('120', NOW), 120_000);
  assert.equal(parseRetryAfter(' 0 ', NOW), 0);
  assert.equal(parseRetryAfter(new Date(NOW + 90_000).toUTCString(), NOW), 90_000);
  assert.equal(parseRetryAfter('Sunday, 01-Mar-26 12:01:00 GMT', NOW), 60_000, 'the obsolete RFC 850 form');
  assert.equal(parseRetryAfter(new Date(NOW - 90_000).toUTCString(), NOW), 0, 'a date past: no delay');
  for (const junk of [null, '', '-5', '1.5', '5.5', 'soon', '2026-03-01T13:00:00Z']) assert.equal(parseRetryAfter(junk, NOW), null, String(junk));
});

t.test('the worker retries at the later of the schedule and Retry-After', async (t) => {
  /** Path → the answer: status and Retry-After. */
  const answers: Record<string, [number, string | undefined]> = {
    '/later': [429, '3600'],
    '/too-late': [503, new Date(NOW + 30 * HOUR).toUTCString()],
    '/sooner': [429, '0'],
    '/junk': [502, 'soon'],
    '/not-asked': [500, '3600'],
    '/gateway-timeout': [504, new Date(NOW + HOUR / 2).toUTCString()],
  };
  const server = createServer((request, response) => {
    const [status, retryAfter] = answers[request.url ?? ''] ?? [404, undefined];
    request.resume().on('end', () => response.writeHead(status, retryAfter === undefined ? {} : { 'retry-after': retryAfter }).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const port = (server.address() as AddressInfo).port;

  const store = new MemoryWebhookStore();
  const outbox = new MemoryWebhookOutbox();
  const box = new SecretBox(randomBytes(32));
  const config = WebhookConfigSchema.parse({ allowPrivateTargets: true, workerIntervalMs: 20, retryScheduleMs: [0, 10_000, 60_000, 2 * HOUR] });
  const worker = new DeliveryWorker({
    outbox,
    store,
    box,
    config,
    transport: { resolve: async () => ['127.0.0.1'], allowPrivateTargets: true },
    log: pino({ level: 'silent' }),
    // A still clock: the delay is exactly the next attempt's time less the last one's.
    now: () => NOW,
  });
  for (const path of Object.keys(answers)) {
    await store.set(path, webhookRecord(`http://127.0.0.1:${port}${path}`, box.seal('whsec_dGVzdA=='), new Date(NOW).toISOString()));
    const body = JSON.stringify({ type: 'webhook.test', timestamp: new Date(NOW).toISOString(), data: {} });
    await outbox.enqueue({ eventId: `evt_${path.slice(1)}`, accountId: path, body, trace: {} });
    await store.logDelivery(path, { eventId: `evt_${path.slice(1)}`, type: 'webhook.test', state: 'pending', attempts: 0, lastStatus: null, lastAttemptAt: null, nextAttemptAt: null, createdAt: new Date(NOW).toISOString(), body }, 10);
  }
  worker.start();
  const delays: Record<string, number> = {};
  await eventually(async () => {
    for (const path of Object.keys(answers)) {
      const logged = await store.getDelivery(path, `evt_${path.slice(1)}`);
      if (logged?.nextAttemptAt && logged.lastAttemptAt) delays[path] = Date.parse(logged.nextAttemptAt) - Date.parse(logged.lastAttemptAt);
    }
    return Object.keys(delays).length === Object.keys(answers).length;
  }, 'a first attempt for every endpoint');
  await worker.stop();

  assert.deepEqual(delays, {
    '/later': HOUR,
    '/too-late': 2 * HOUR,
    '/sooner': 10_000,
    '/junk': 10_000,
    '/not-asked': 10_000,
    '/gateway-timeout': HOUR / 2,
  });
});
