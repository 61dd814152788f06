/**
 * rateLimitHeaders: the X-RateLimit-* fields of the key policy closest to exhaustion, and the IETF
 * RateLimit-Policy / RateLimit fields of every policy reported (the source IP's only when it
 * refused). The RateLimit-Policy text of the last decision is reused when the next one states the
 * same rules: decisions that differ in any stated rule, in which policies are reported or in how
 * many, in turn, each get their own text.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { rateLimitHeaders } from '../../src/limits/rate-limiter.js';
import type { PolicyState, RateDecision } from '../../src/stores/types.js';

const keyMinute = (remaining: number, burst = 20): PolicyState => ({ name: 'key_minute', limit: burst + 1, remaining, resetMs: 2500, windowSeconds: 60, quota: 60, burst });
const keyDay = (remaining: number, quota = 5000): PolicyState => ({ name: 'key_day', limit: quota, remaining, resetMs: 40_000_000, windowSeconds: 86400, quota });
const account = (remaining: number): PolicyState => ({ name: 'account_minute', limit: 120, remaining, resetMs: 59_001, windowSeconds: 60, quota: 120 });
const ip = (remaining: number): PolicyState => ({ name: 'ip_minute', limit: 600, remaining, resetMs: 1_000, windowSeconds: 60, quota: 600 });

function decision(policies: PolicyState[], violated: RateDecision['violated'] = []): RateDecision {
  return { allowed: violated.length === 0, violated, retryAfterMs: violated.length === 0 ? null : 1000, policies };
}

const KEY = '"key_minute";q=60;w=60;rg-burst=20, "key_day";q=5000;w=86400, "account_minute";q=120;w=60';

t.test('each decision in turn gets the RateLimit-Policy of its own rules', async () => {
  const cases: Array<[string, RateDecision, string, string]> = [
    ['a key within its limits', decision([ip(500), keyMinute(19), keyDay(4000), account(100)]), KEY, '"key_minute";r=19;t=3, "key_day";r=4000;t=40000, "account_minute";r=100;t=60'],
    ['the same rules again', decision([ip(499), keyMinute(18), keyDay(3999), account(99)]), KEY, '"key_minute";r=18;t=3, "key_day";r=3999;t=40000, "account_minute";r=99;t=60'],
    ['another burst', decision([ip(498), keyMinute(5, 10), keyDay(3998), account(98)]), '"key_minute";q=60;w=60;rg-burst=10, "key_day";q=5000;w=86400, "account_minute";q=120;w=60', '"key_minute";r=5;t=3, "key_day";r=3998;t=40000, "account_minute";r=98;t=60'],
    ['another day quota', decision([ip(497), keyMinute(17), keyDay(10, 20), account(97)]), '"key_minute";q=60;w=60;rg-burst=20, "key_day";q=20;w=86400, "account_minute";q=120;w=60', '"key_minute";r=17;t=3, "key_day";r=10;t=40000, "account_minute";r=97;t=60'],
    ['the first rules again', decision([ip(496), keyMinute(16), keyDay(3997), account(96)]), KEY, '"key_minute";r=16;t=3, "key_day";r=3997;t=40000, "account_minute";r=96;t=60'],
    ['the source IP refused: reported first', decision([ip(0), keyMinute(16), keyDay(3997), account(96)], ['ip_minute']), `"ip_minute";q=600;w=60, ${KEY}`, '"ip_minute";r=0;t=1, "key_minute";r=16;t=3, "key_day";r=3997;t=40000, "account_minute";r=96;t=60'],
    ['no account limit (profile B)', decision([ip(495), keyMinute(15), keyDay(3996)]), '"key_minute";q=60;w=60;rg-burst=20, "key_day";q=5000;w=86400', '"key_minute";r=15;t=3, "key_day";r=3996;t=40000'],
    ['the first rules once more', decision([ip(494), keyMinute(14), keyDay(3995), account(95)]), KEY, '"key_minute";r=14;t=3, "key_day";r=3995;t=40000, "account_minute";r=95;t=60'],
    ['the source IP alone, within its limit: nothing stated', decision([ip(493)]), '', ''],
    ['the source IP alone, refused', decision([ip(0)], ['ip_minute']), '"ip_minute";q=600;w=60', '"ip_minute";r=0;t=1'],
    ['the first rules after those', decision([ip(492), keyMinute(13), keyDay(3994), account(94)]), KEY, '"key_minute";r=13;t=3, "key_day";r=3994;t=40000, "account_minute";r=94;t=60'],
  ];
  for (const [what, given, policy, state] of cases) {
    const headers = rateLimitHeaders(given);
    assert.equal(headers['ratelimit-policy'], policy === '' ? undefined : policy, what);
    assert.equal(headers['ratelimit'], state === '' ? undefined : state, what);
  }
});

t.test('X-RateLimit-* follow the key policy closest to exhaustion', async () => {
  const headers = rateLimitHeaders(decision([ip(1), keyMinute(7), keyDay(3), account(0)]));
  assert.deepEqual(
    { limit: headers['x-ratelimit-limit'], remaining: headers['x-ratelimit-remaining'], reset: headers['x-ratelimit-reset'] },
    { limit: '5000', remaining: '3', reset: '40000' },
  );
  // A tie goes to the policy that takes longer to recover.
  const tie = rateLimitHeaders(decision([keyMinute(3), keyDay(3)]));
  assert.equal(tie['x-ratelimit-limit'], '5000');
});
