/**
 * Two operators (or instances) changing one account or key at once: each reads the record, then
 * writes it. Neither may undo the other: a revocation must survive a rotation's later end, and a
 * disable must survive a rename.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { AdminService } from '../../src/admin/service.js';
import { KeyService } from '../../src/keys/key-service.js';
import { SCOPES } from '../../src/keys/scopes.js';
import { MemoryKeyStore } from '../../src/stores/memory/key-store.js';
import { readTogether } from '../helpers/read-together.js';

const PEPPER = 'concurrent-test-pepper-0123456789abcdef012345';
const DAY = 86_400_000;

async function setup() {
  const now = Date.UTC(2026, 10, 28, 12, 0, 0);
  const store = new MemoryKeyStore();
  const keys = new KeyService(store, PEPPER, { now: () => now, cacheTtlMs: 1 });
  const admin = new AdminService({ keys, store, now: () => now });
  await keys.createAccount({ id: 'acme', name: 'Acme', upstreamId: '1' });
  return { store, keys, admin, now };
}

t.test('a revocation now is kept when a rotation ends the key later at the same moment', async () => {
  const { store, keys, now } = await setup();
  const { record, key } = await keys.issue({ accountId: 'acme', name: 'k', scopes: [...SCOPES], expiresAt: null });
  store.getKey = readTogether(store.getKey.bind(store));
  await Promise.all([keys.revoke(record.id), keys.revoke(record.id, new Date(now + 30 * DAY))]);
  assert.equal((await store.getKey(record.id))?.revokedAt, new Date(now).toISOString(), 'the earlier end stands');
  assert.equal(await keys.authenticate(key), 'revoked');
});

t.test('a rename and a disable at once: the account is renamed and disabled', async () => {
  const { store, admin } = await setup();
  store.getAccount = readTogether(store.getAccount.bind(store));
  await Promise.all([admin.updateAccount('acme', { name: 'Acme Hosting' }), admin.setAccountDisabled('acme', true)]);
  const account = await store.getAccount('acme');
  assert.equal(account?.name, 'Acme Hosting');
  assert.notEqual(account?.disabledAt ?? null, null, 'still disabled');
});

t.test('two creations of one account at once: one is refused, the first is kept', async () => {
  const { keys, store } = await setup();
  const results = await Promise.allSettled([
    keys.createAccount({ id: 'beta', name: 'First', upstreamId: '2' }),
    keys.createAccount({ id: 'beta', name: 'Second', upstreamId: '3' }),
  ]);
  assert.deepEqual(results.map((result) => result.status), ['fulfilled', 'rejected']);
  assert.match(String((results[1] as PromiseRejectedResult).reason), /account beta already exists/);
  assert.equal((await store.getAccount('beta'))?.name, 'First');
});

t.test('a retried issue or rotation whose key was revoked in between does not bring the key back', async () => {
  const { store, keys, admin } = await setup();
  // The first attempt wrote its key but its answer was never recorded; the caller revoked the key.
  const issued = await admin.issueKey({ accountId: 'acme', name: 'k', scopes: [...SCOPES], keyId: '00000000000000b1' });
  await keys.revoke(issued.record.id);
  await assert.rejects(admin.issueKey({ accountId: 'acme', name: 'k', scopes: [...SCOPES], keyId: '00000000000000b1' }), /key 00000000000000b1 was revoked/);
  assert.notEqual((await store.getKey('00000000000000b1'))?.revokedAt, null);
  assert.equal(await keys.authenticate(issued.key), 'revoked');

  const old = await admin.issueKey({ accountId: 'acme', name: 'old', scopes: [...SCOPES] });
  const rotated = await admin.rotateKey(old.record.id, DAY, '00000000000000b2');
  await keys.revoke(rotated.record.id);
  await assert.rejects(admin.rotateKey(old.record.id, DAY, '00000000000000b2'), /key 00000000000000b2 was revoked/);
  assert.notEqual((await store.getKey('00000000000000b2'))?.revokedAt, null);
});
