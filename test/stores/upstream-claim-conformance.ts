/**
 * One upstream customer, one account (contract §1, read both ways): every key store refuses a
 * conditional write (replaceAccount, what every operator change goes through) that would map a
 * second account to a customer another holds, atomically, and moves the claim with a remap. The
 * unconditional putAccount (restores, and what an older release left) is never refused: accounts
 * that already share a customer go on working, and still hold it against a newcomer.
 */
import assert from 'node:assert/strict';
import type { Test } from 'tap';
import { UpstreamClaimedError, type AccountRecord, type KeyStore } from '../../src/stores/types.js';
import { unique, type Fixture, type FixtureFactory } from './conformance.js';

function account(upstreamId: string, overrides: Partial<AccountRecord> = {}): AccountRecord {
  return { id: unique('acct'), name: 'Reseller', upstreamId, createdAt: '2026-03-01T10:00:00.000Z', ...overrides };
}

/** The refusal a claimed customer answers: it names the customer and the account holding it. */
async function refusedFor(write: Promise<boolean>, upstreamId: string, holder: string): Promise<void> {
  await assert.rejects(write, (error: unknown) => {
    assert.ok(error instanceof UpstreamClaimedError, `refused as claimed, not ${String(error)}`);
    assert.equal(error.upstreamId, upstreamId);
    assert.equal(error.holder, holder);
    return true;
  });
}

export function runUpstreamClaimConformance(t: Test, name: string, factory: FixtureFactory<KeyStore>): void {
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

  t.test(`${name}: one upstream customer, one account`, async (t) => {
    test('a second account on a claimed customer is refused, and nothing of it is written', async ({ store }) => {
      const first = account('21');
      assert.equal(await store.replaceAccount(first, null), true);
      const typo = account('21');
      await refusedFor(store.replaceAccount(typo, null), '21', first.id);
      assert.equal(await store.getAccount(typo.id), null);
      assert.deepEqual((await store.listAccounts()).map((each) => each.id), [first.id]);
      assert.equal(await store.replaceAccount(account('12'), null), true, 'another customer is free');
    });

    test('a remap moves the claim: the old customer is free, the new one held', async ({ store }) => {
      const mover = account('31');
      await store.replaceAccount(mover, null);
      const moved = { ...mover, upstreamId: '32' };
      assert.equal(await store.replaceAccount(moved, mover), true);
      await refusedFor(store.replaceAccount(account('32'), null), '32', mover.id);
      assert.equal(await store.replaceAccount(account('31'), null), true, 'the customer it left');
    });

    test('a remap onto a claimed customer is refused and the account stays as it was', async ({ store }) => {
      const holder = account('41');
      const other = account('42');
      await store.replaceAccount(holder, null);
      await store.replaceAccount(other, null);
      await refusedFor(store.replaceAccount({ ...other, upstreamId: '41' }, other), '41', holder.id);
      assert.deepEqual(await store.getAccount(other.id), other);
      assert.equal(await store.replaceAccount({ ...other, name: 'Renamed' }, other), true, 'its own customer is still its own');
    });

    test('a disabled account keeps its claim (it may be enabled again)', async ({ store }) => {
      const holder = account('51');
      await store.replaceAccount(holder, null);
      const disabled = { ...holder, disabledAt: '2026-03-02T00:00:00.000Z' };
      assert.equal(await store.replaceAccount(disabled, holder), true);
      await refusedFor(store.replaceAccount(account('51'), null), '51', holder.id);
    });

    test('creations racing for one customer: exactly one wins, none of the others is left claimed', async ({ store }) => {
      const racers = Array.from({ length: 6 }, () => account('61'));
      const results = await Promise.allSettled(racers.map((each) => store.replaceAccount(each, null)));
      const won = results.flatMap((result, index) => (result.status === 'fulfilled' && result.value ? [racers[index] as AccountRecord] : []));
      assert.equal(won.length, 1, 'one creation wins');
      for (const result of results) if (result.status === 'rejected') assert.ok(result.reason instanceof UpstreamClaimedError, String(result.reason));
      assert.deepEqual((await store.listAccounts()).map((each) => each.id), [won[0]?.id]);
      const winner = won[0] as AccountRecord;
      assert.equal(await store.replaceAccount({ ...winner, upstreamId: '62' }, winner), true);
      assert.equal(await store.replaceAccount(account('61'), null), true, 'freed by the winner alone');
    });

    test('accounts that already share a customer keep working; a newcomer is still refused', async ({ store }) => {
      const older = account('71', { createdAt: '2026-01-01T00:00:00.000Z' });
      const newer = account('71', { createdAt: '2026-02-01T00:00:00.000Z' });
      await store.putAccount(older);
      await store.putAccount(newer);
      const renamed = { ...newer, name: 'Renamed' };
      assert.equal(await store.replaceAccount(renamed, newer), true, 'a change that keeps the customer');
      const disabled = { ...older, disabledAt: '2026-03-02T00:00:00.000Z' };
      assert.equal(await store.replaceAccount(disabled, older), true);
      await assert.rejects(store.replaceAccount(account('71'), null), UpstreamClaimedError);
      assert.equal(await store.replaceAccount({ ...renamed, upstreamId: '72' }, renamed), true, 'one moves away');
      await refusedFor(store.replaceAccount(account('71'), null), '71', older.id);
      assert.equal(await store.replaceAccount({ ...disabled, upstreamId: '73' }, disabled), true, 'the other moves away');
      assert.equal(await store.replaceAccount(account('71'), null), true, 'free at last');
    });
  });
}
