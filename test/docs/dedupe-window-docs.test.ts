/**
 * The README tells receivers how long to keep the `webhook-id`s they handled. A copy of an event can
 * come as long as its retries run: a receiver that handled an attempt whose answer was lost (it took
 * longer than 15 s, the connection dropped) gets the next one up to a whole jittered step later, and
 * the attempts after that if those answers are lost too. "A day is plenty" was shorter than one
 * step of the default schedule with its jitter (24 h × 1.2): a receiver following it handled such an
 * event twice.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { WebhookConfigSchema } from '../../src/config.js';

t.test('the dedupe window the README gives covers every retry of the default schedule', async () => {
  const { retryScheduleMs, retryJitter } = WebhookConfigSchema.parse({});
  // From the first attempt to the last: every later step, each at its longest jitter.
  const span = retryScheduleMs.slice(1).reduce((sum, step) => sum + step * (1 + retryJitter), 0);
  const readme = readFileSync('README.md', 'utf8').replace(/\s+/g, ' ');
  const advice = /keep the ids you have handled \(([^)]*)\)/.exec(readme)?.[1];
  assert.ok(advice, 'the README says how long to keep handled ids');
  const days = /(\d+) days/.exec(advice)?.[1];
  assert.ok(days, `a number of days: "${advice}"`);
  assert.ok(Number(days) * 86_400_000 >= span, `${days} days cover the ${(span / 3_600_000).toFixed(1)} h the retries can span`);
});
