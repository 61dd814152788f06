/**
 * A webhook receiver's Retry-After in the third HTTP-date form, ANSI C's asctime (RFC 9110 §5.6.7:
 * recipients must accept it). It carries no zone: it is GMT as the other two forms are, whatever
 * the gateway machine's zone (set here to one far from UTC).
 */
process.env.TZ = 'Pacific/Auckland';
import assert from 'node:assert/strict';
import t from 'tap';
import { parseRetryAfter } from '../../src/webhooks/transport.js';

t.test('parseRetryAfter reads the asctime form as GMT', async () => {
  const now = Date.parse('2026-03-01T12:00:00.000Z');
  assert.equal(parseRetryAfter('Sun Mar  1 12:01:00 2026', now), 60_000, 'one minute later, GMT');
  assert.equal(parseRetryAfter('Sun Mar 15 12:00:00 2026', now), 14 * 86_400_000, 'a two-digit day');
  assert.equal(parseRetryAfter('Sun Mar  1 12:01:00 2026 extra', now), null, 'not the form');
});
