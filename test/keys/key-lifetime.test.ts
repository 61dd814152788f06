/**
 * A key's lifetime as the operator set it: a key is refused from its expiry instant on, and
 * rotation hands the successor the same end (its expiry), never a longer one. Rotating a key that
 * is already scheduled for revocation ends it at that time at the latest, whatever grace is asked.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { KeyService } from '../../src/keys/key-service.js';
import { SCOPES } from '../../src/keys/scopes.js';
import { MemoryKeyStore } from '../../src/stores/memory/key-store.js';

const PEPPER = 'review-key-lifetime-pepper-0123456789abcdef0123';
const HOUR = 3_600_000;

async function setup() {
  let now = Date.UTC(2026, 10, 22, 12, 0, 0);
  const keys = new KeyService(new MemoryKeyStore(), PEPPER, { now: () => now, cacheTtlMs: 1 });
  await keys.createAccount({ id: 'acme', name: 'Acme', upstreamId: '1' });
  const issue = (expiresAt: string | null = null) => keys.issue({ accountId: 'acme', name: 'k', scopes: [...SCOPES], expiresAt });
  return { keys, issue, advance: (ms: number) => (now += ms), at: (offsetMs: number) => new Date(now + offsetMs).toISOString() };
}

t.test('a key is refused from the instant it expires', async () => {
  const { keys, issue, advance, at } = await setup();
  const { key } = await issue(at(HOUR));
  advance(HOUR - 1);
  assert.equal(typeof (await keys.authenticate(key)), 'object', 'valid just before');
  advance(1);
  assert.equal(await keys.authenticate(key), 'expired', 'expired at its expires_at');
});

t.test("the successor of a rotated key keeps the old key's expiry", async () => {
  const { keys, issue, at, advance } = await setup();
  const expiresAt = at(2 * HOUR);
  const { record } = await issue(expiresAt);
  const rotated = await keys.rotate(record.id, 0);
  assert.equal(rotated.record.expiresAt, expiresAt);
  advance(2 * HOUR);
  assert.equal(await keys.authenticate(rotated.key), 'expired', 'rotation does not turn an expiring key into a lasting one');
});

t.test('rotating a key scheduled for revocation never postpones its end', async () => {
  const { keys, issue, at, advance } = await setup();
  const { record, key } = await issue();
  const end = at(HOUR);
  await keys.revoke(record.id, new Date(end));
  const rotated = await keys.rotate(record.id, 24 * HOUR);
  assert.equal(rotated.old.revokedAt, end, 'revoked at the time already set, not after the grace period');
  advance(HOUR);
  assert.equal(await keys.authenticate(key), 'revoked');
});
