/**
 * The Redis rate-limit store reads the script's reply (packed doubles: `now`, then per group checked
 * its readings) into the decision: each policy's outcome from its own readings, the groups after a
 * refused one absent, and a reply of any other length refused as an error, never read as a decision.
 * The connection is a stand-in that answers given bytes; the script itself is tested against a real
 * Redis in redis.test.ts.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import type { RedisConnection } from '../../src/stores/redis/connection.js';
import { RedisRateLimitStore } from '../../src/stores/redis/rate-limit-store.js';
import { ipGroup, keyGroup } from '../../src/stores/rate-policies.js';
import type { RateDecision } from '../../src/stores/types.js';

const NOW = 1_700_000_000_000;
const ip = ipGroup('192.0.2.1', { limit: 600, windowMs: 60_000 });
const key = keyGroup({ accountId: 'acme', keyId: 'k1', perMinute: { ratePerMinute: 60, burst: 20 }, perDay: 5000, accountPerMinute: { limit: 120, windowMs: 60_000 } });

function doubles(...values: number[]): Buffer {
  const bytes = Buffer.alloc(values.length * 8);
  values.forEach((value, index) => bytes.writeDoubleBE(value, index * 8));
  return bytes;
}

/** A store whose every script call answers `reply.bytes` (changed between calls by the test). */
function storeAnswering(reply: { bytes: Buffer }): RedisRateLimitStore {
  const connection = { client: {}, keyPrefix: 'rg:', evalScriptBuffer: () => Promise.resolve(reply.bytes) };
  return new RedisRateLimitStore(connection as unknown as RedisConnection);
}

const remaining = (decision: RateDecision) => Object.fromEntries(decision.policies.map((policy) => [policy.name, policy.remaining]));

t.test('readings of both groups, each policy from its own', async () => {
  const reply: { bytes: Buffer } = { bytes: Buffer.alloc(0) };
  const store = storeAnswering(reply);
  // IP log: 10 in the window; key: at rest (TAT - now 0), 7 today; account log: 30 in the window.
  reply.bytes = doubles(NOW, 10, -500, 0, 0, 7, 30, -100, 0);
  const allowed = await store.hit([ip, key]);
  assert.equal(allowed.allowed, true);
  assert.deepEqual(allowed.violated, []);
  assert.deepEqual(remaining(allowed), { ip_minute: 589, key_minute: 20, key_day: 4992, account_minute: 89 });

  // The account's window full: the key's group refused and not consumed; the source IP's counted.
  reply.bytes = doubles(NOW, 11, -5, 0, 0, 7, 120, -1, -59_500);
  const refused = await store.hit([ip, key]);
  assert.equal(refused.allowed, false);
  assert.deepEqual(refused.violated, ['account_minute']);
  assert.deepEqual(remaining(refused), { ip_minute: 588, key_minute: 21, key_day: 4993, account_minute: 0 });
  assert.equal(refused.retryAfterMs, 500);

  // The source IP refused: the key's group is not checked, and its policies are absent.
  reply.bytes = doubles(NOW, 600, -10, -59_000);
  const ipRefused = await store.hit([ip, key]);
  assert.equal(ipRefused.allowed, false);
  assert.deepEqual(ipRefused.violated, ['ip_minute']);
  assert.deepEqual(remaining(ipRefused), { ip_minute: 0 });
  assert.equal(ipRefused.retryAfterMs, 1000);

  // The key at the end of its burst (TAT 20 s ahead: 20 intervals), read after the log's readings.
  reply.bytes = doubles(NOW, 10, -500, -70_000, 20_000, 7, 30, -100, 0);
  const burstUsed = await store.hit([ip, key]);
  assert.deepEqual(remaining(burstUsed), { ip_minute: 589, key_minute: 0, key_day: 4992, account_minute: 89 });
  assert.equal(burstUsed.allowed, true);
});

t.test('a reply of another length is an error, never a decision', async () => {
  const cases: Array<[string, Buffer, RegExp]> = [
    ['empty', Buffer.alloc(0), /unexpected reply/],
    ['not whole doubles', Buffer.alloc(7), /unexpected reply/],
    ['cut inside the first group', doubles(NOW, 10, -500), /ends inside a group/],
    ['cut inside the second group', doubles(NOW, 10, -500, 0, 0, 7, 30), /ends inside a group/],
    ['a value too many', doubles(NOW, 10, -500, 0, 0, 7, 30, -100, 0, 1), /1 values too many/],
    ['readings after a refused group', doubles(NOW, 600, -10, -59_000, 0, 7, 30, -100, 0), /5 values too many/],
  ];
  for (const [what, bytes, error] of cases) {
    await assert.rejects(storeAnswering({ bytes }).hit([ip, key]), error, what);
  }
});
