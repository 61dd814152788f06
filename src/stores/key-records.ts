/** What the KeyStore implementations share: listing order, invalidation listeners, record copies. */
import { UpstreamClaimedError, type AccountRecord, type ApiKeyRecord, type KeyStore } from './types.js';

/**
 * Lists come oldest first; the id breaks ties so that every store lists in the same order. Compared
 * by code unit, as RFC 3339 timestamps sort: localeCompare would order by the process's locale (its
 * environment's), so two instances could list differently.
 */
export function byCreation<T extends AccountRecord | ApiKeyRecord>(records: T[]): T[] {
  return records.sort((a, b) => compareText(a.createdAt, b.createdAt) || compareText(a.id, b.id));
}

/** Code-unit order: the same in every process, whatever its locale. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A copy of a record held in memory, so that a caller changing it cannot change the store. */
export function copyOrNull<T>(record: T | undefined): T | null {
  return record === undefined ? null : structuredClone(record);
}

/** Whether a stored record is still the one a caller read (records are plain JSON, written in one key order). */
export function sameRecord(stored: AccountRecord | ApiKeyRecord | undefined, expected: AccountRecord | ApiKeyRecord | null): boolean {
  return stored === undefined ? expected === null : expected !== null && JSON.stringify(stored) === JSON.stringify(expected);
}

/**
 * Refuses a write of `account` over `stored` (undefined: a creation) that would map it to an
 * upstream customer another account holds (KeyStore.replaceAccount). A write that keeps the stored
 * record's customer is never refused: accounts that shared one before the gateway refused it go on
 * working, renamed or disabled. The stores held in memory look over every account: they run it
 * on operator writes only, over records they hold already (the file store re-reads them anyway).
 */
export function refuseClaimed(accounts: Iterable<AccountRecord>, account: AccountRecord, stored: AccountRecord | undefined): void {
  if (stored?.upstreamId === account.upstreamId) return;
  for (const other of accounts) {
    if (other.id !== account.id && other.upstreamId === account.upstreamId) throw new UpstreamClaimedError(account.upstreamId, other.id);
  }
}

/** getKeyWithAccount for a store where each read is cheap: the key, then its account. */
export async function keyWithAccount(store: Pick<KeyStore, 'getKey' | 'getAccount'>, id: string): Promise<{ key: ApiKeyRecord; account: AccountRecord } | null> {
  const key = await store.getKey(id);
  const account = key ? await store.getAccount(key.accountId) : null;
  return key && account ? { key, account } : null;
}

export class InvalidationListeners {
  private readonly listeners: Array<(keyId: string | null) => void> = [];

  add(listener: (keyId: string | null) => void): void {
    this.listeners.push(listener);
  }

  notify(keyId: string | null): void {
    for (const listener of this.listeners) listener(keyId);
  }
}
