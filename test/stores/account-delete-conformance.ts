/**
 * Deleting an account (an operator offboarding a reseller), in every key store: the account and
 * every key of it go in one step, its upstream customer is free at once, its id is never an
 * account's again (what is kept under it, idempotency records and their answers, would reach the new
 * holder), and a deletion over a record changed since it was read deletes nothing.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import { UpstreamClaimedError, type AccountRecord, type ApiKeyRecord, type KeyStore } from '../../src/stores/types.js';
import { unique, type Fixture, type FixtureFactory } from './conformance.js';

function account(upstreamId: string): AccountRecord {
  return { id: unique('acct'), name: 'Reseller', upstreamId, createdAt: '2026-03-01T10:00:00.000Z' };
}

function key(accountId: string): ApiKeyRecord {
  const id = randomBytes(8).toString('hex');
  return { id, accountId, name: id, scopes: [], secretHash: 'ab'.repeat(32), createdAt: '2026-03-01T10:00:00.000Z', expiresAt: null, revokedAt: null, rateLimits: null };
}

export function runAccountDeleteConformance(t: Test, name: string, factory: FixtureFactory<KeyStore>): void {
  const test = (title: string, body: (fixture: Fixture<KeyStore>) => Promise<void>): void => {
    t.test(title, async () => {
      const fixture = await factory();
      try {
        await body(fixture);
      } finally {
        await fixture.close();
      }
    });
  };

  t.test(`${name}: deleting an account`, async () => {
    test('the account and its keys go, another account keeps its own, and the customer is free', async ({ store }) => {
      const leaving = account('51');
      const staying = account('52');
      await store.replaceAccount(leaving, null);
      await store.replaceAccount(staying, null);
      const keys = [key(leaving.id), key(leaving.id)];
      const kept = key(staying.id);
      for (const each of [...keys, kept]) await store.putKey(each);

      const deleted = await store.deleteAccount(leaving);
      assert.deepEqual([...(deleted ?? [])].sort(), keys.map((each) => each.id).sort());
      assert.equal(await store.getAccount(leaving.id), null);
      for (const each of keys) {
        assert.equal(await store.getKey(each.id), null);
        assert.equal(await store.getKeyWithAccount(each.id), null);
      }
      assert.deepEqual(await store.listKeys(leaving.id), []);
      assert.deepEqual((await store.listKeys()).map((each) => each.id), [kept.id]);
      assert.deepEqual((await store.listAccounts()).map((each) => each.id), [staying.id]);
      assert.equal(await store.replaceAccount(account('51'), null), true, 'its customer is free');
    });

    test('the id of a deleted account is not used again; a key written late under it serves nothing', async ({ store }) => {
      const first = account('61');
      await store.replaceAccount(first, null);
      const old = key(first.id);
      await store.putKey(old);
      assert.deepEqual(await store.deleteAccount(first), [old.id]);
      // The issue read the account before the deletion and writes its key after it.
      const late = key(first.id);
      await store.putKey(late);
      assert.equal(await store.getKeyWithAccount(late.id), null);
      const again = { ...first, upstreamId: '62', createdAt: '2026-04-01T10:00:00.000Z' };
      assert.equal(await store.replaceAccount(again, null), false, 'refused: the id was retired');
      assert.equal(await store.getAccount(first.id), null);
      assert.equal(await store.getKeyWithAccount(old.id), null);
      assert.equal(await store.getKeyWithAccount(late.id), null);
      assert.equal(await store.replaceAccount(account('62'), null), true, 'its would-be customer is free for another id');
    });

    test('of two accounts that shared a customer (before sharing was refused), deleting one leaves the customer held by the other', async ({ store }) => {
      const leaving = account('81');
      const sharing = account('81');
      await store.putAccount(leaving);
      await store.putAccount(sharing);
      assert.ok(await store.deleteAccount(leaving));
      await assert.rejects(store.replaceAccount(account('81'), null), UpstreamClaimedError, 'still held by the other');
      assert.ok(await store.deleteAccount(sharing));
      assert.equal(await store.replaceAccount(account('81'), null), true, 'free once both are gone');
    });

    test('over a record changed since it was read, or gone, nothing is deleted', async ({ store }) => {
      const read = account('71');
      await store.replaceAccount(read, null);
      const kept = key(read.id);
      await store.putKey(kept);
      const renamed = { ...read, name: 'Renamed' };
      assert.equal(await store.replaceAccount(renamed, read), true);
      assert.equal(await store.deleteAccount(read), null);
      assert.deepEqual(await store.getAccount(read.id), renamed);
      assert.ok(await store.getKey(kept.id));
      assert.deepEqual(await store.deleteAccount(renamed), [kept.id]);
      assert.equal(await store.deleteAccount(renamed), null, 'gone');
      await assert.rejects(store.replaceAccount(account('72'), null).then(() => store.replaceAccount(account('72'), null)), 'the claims still hold after a deletion');
    });
  });
}
