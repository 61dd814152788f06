/**
 * Retry-After (reference W7): a receiver answering 429/502/503/504 with Retry-After is retried at
 * the later of the schedule and its Retry-After, capped at the schedule's longest step; other
 * statuses keep the schedule. Each retry's delay carries a jitter of up to ±20 % (reference W6).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
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

/** Path → the answer: status and Retry-After. */
type Answers = Record<string, [number, string | undefined]>;

/**
 * Runs a worker until each path's endpoint has had its first attempt, and returns the delay it set
 * before the second: the next attempt's time less the first's, under a still clock.
 */
async function firstDelays(t: Test, answers: Answers, settings: Record<string, unknown>, random?: () => number): Promise<Record<string, number>> {
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
  const config = WebhookConfigSchema.parse({ allowPrivateTargets: true, workerIntervalMs: 20, retryScheduleMs: [0, 10_000, 60_000, 2 * HOUR], ...settings });
  const worker = new DeliveryWorker({
    outbox,
    store,
    box,
    config,
    transport: { resolve: async () => ['127.0.0.1'], allowPrivateTargets: true },
    log: pino({ level: 'silent' }),
    now: () => NOW,
    ...(random ? { random } : {}),
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
  return delays;
}

t.test('the worker retries at the later of the schedule and Retry-After', async (t) => {
  const answers: Answers = {
    '/later': [429, '3600'],
    '/too-late': [503, new Date(NOW + 30 * HOUR).toUTCString()],
    '/sooner': [429, '0'],
    '/junk': [502, 'soon'],
    '/not-asked': [500, '3600'],
    '/gateway-timeout': [504, new Date(NOW + HOUR / 2).toUTCString()],
  };
  // Without jitter, each delay is exactly the schedule's or the receiver's.
  assert.deepEqual(await firstDelays(t, answers, { retryJitter: 0 }), {
    '/later': HOUR,
    '/too-late': 2 * HOUR,
    '/sooner': 10_000,
    '/junk': 10_000,
    '/not-asked': 10_000,
    '/gateway-timeout': HOUR / 2,
  });
});

t.test('each retry is moved by up to the jitter either way (reference W6), never before Retry-After', async (t) => {
  const answers: Answers = { '/failing': [500, undefined], '/later': [429, '3600'], '/soon': [503, '5'] };
  // The default jitter is ±20 %: the extremes of the random draw give 0.8 and 1.2 times the step.
  assert.deepEqual(await firstDelays(t, answers, {}, () => 0), { '/failing': 8_000, '/later': HOUR, '/soon': 8_000 });
  assert.deepEqual(await firstDelays(t, answers, {}, () => 0.5), { '/failing': 10_000, '/later': HOUR, '/soon': 10_000 });
  assert.deepEqual(await firstDelays(t, answers, { retryJitter: 0.1 }, () => 0.75), { '/failing': 10_500, '/later': HOUR, '/soon': 10_500 });
  const high = await firstDelays(t, answers, {}, () => 1 - Number.EPSILON);
  assert.deepEqual(high, { '/failing': 12_000, '/later': HOUR, '/soon': 12_000 });

  // With the real draw: twenty events failed together come back spread over the window, not at once.
  const many: Answers = Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`/e${index}`, [500, undefined]]));
  const delays = Object.values(await firstDelays(t, many, {}));
  for (const delay of delays) assert.ok(delay >= 8_000 && delay <= 12_000, `${delay} ms is within 10 s ± 20 %`);
  assert.ok(new Set(delays).size > 10, `twenty retries fall at ${new Set(delays).size} distinct times`);
});

t.test('the jitter is a fraction of at most one half', async () => {
  assert.equal(WebhookConfigSchema.parse({}).retryJitter, 0.2);
  assert.equal(WebhookConfigSchema.parse({}).retryScheduleMs.length, 10, 'reference W6: ten attempts');
  for (const bad of [-0.1, 0.6, '0.2']) assert.equal(WebhookConfigSchema.safeParse({ retryJitter: bad }).success, false, String(bad));
});
