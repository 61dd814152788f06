/**
 * Retry-After (reference W7): a receiver answering 429/502/503/504 with Retry-After is retried at
 * the later of the schedule and its Retry-After, capped at the schedule's longest step; other
 * statuses keep the schedule. Each retry's delay carries a jitter of up to ±20 % (reference W6).
 */
import assert from 'node:assert/strict';
import t, { type Test } from 'tap';
import { WebhookConfigSchema } from '../../src/config.js';
import { parseRetryAfter } from '../../src/webhooks/transport.js';
import { firstAttempts, type EndpointAnswers } from '../helpers/worker-harness.js';

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

/** The delay each path's endpoint was given before its second attempt: next attempt less first. */
async function firstDelays(t: Test, answers: EndpointAnswers, settings: Record<string, unknown>, random?: () => number): Promise<Record<string, number>> {
  const base = { retryScheduleMs: [0, 10_000, 60_000, 2 * HOUR] };
  const { entries } = await firstAttempts(t, answers, { now: NOW, settings: { ...base, ...settings }, worker: random ? { random } : {} });
  return Object.fromEntries(Object.entries(entries).map(([path, entry]) => [path, Date.parse(entry.nextAttemptAt ?? '') - Date.parse(entry.lastAttemptAt ?? '')]));
}

t.test('the worker retries at the later of the schedule and Retry-After', async (t) => {
  const answers: EndpointAnswers = {
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
  const answers: EndpointAnswers = { '/failing': [500, undefined], '/later': [429, '3600'], '/soon': [503, '5'] };
  // The default jitter is ±20 %: the extremes of the random draw give 0.8 and 1.2 times the step.
  assert.deepEqual(await firstDelays(t, answers, {}, () => 0), { '/failing': 8_000, '/later': HOUR, '/soon': 8_000 });
  assert.deepEqual(await firstDelays(t, answers, {}, () => 0.5), { '/failing': 10_000, '/later': HOUR, '/soon': 10_000 });
  assert.deepEqual(await firstDelays(t, answers, { retryJitter: 0.1 }, () => 0.75), { '/failing': 10_500, '/later': HOUR, '/soon': 10_500 });
  const high = await firstDelays(t, answers, {}, () => 1 - Number.EPSILON);
  assert.deepEqual(high, { '/failing': 12_000, '/later': HOUR, '/soon': 12_000 });

  // With the real draw: twenty events failed together come back spread over the window, not at once.
  const many: EndpointAnswers = Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`/e${index}`, [500, undefined]]));
  const delays = Object.values(await firstDelays(t, many, {}));
  for (const delay of delays) assert.ok(delay >= 8_000 && delay <= 12_000, `${delay} ms is within 10 s ± 20 %`);
  assert.ok(new Set(delays).size > 10, `twenty retries fall at ${new Set(delays).size} distinct times`);
});

t.test('the jitter is a fraction of at most one half', async () => {
  assert.equal(WebhookConfigSchema.parse({}).retryJitter, 0.2);
  assert.equal(WebhookConfigSchema.parse({}).retryScheduleMs.length, 10, 'reference W6: ten attempts');
  for (const bad of [-0.1, 0.6, '0.2']) assert.equal(WebhookConfigSchema.safeParse({ retryJitter: bad }).success, false, String(bad));
});
