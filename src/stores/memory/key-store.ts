/** Accounts and keys in process memory, gone on exit. Sandbox mode keeps them in a FileKeyStore instead. */
import { byCreation, keyWithAccount, copyOrNull, InvalidationListeners, refuseClaimed, sameRecord } from '../key-records.js';
import type { AccountRecord, ApiKeyRecord, KeyStore } from '../types.js';

/** Operators create accounts and keys, clients cannot, so plain maps need no bound. */
export class MemoryKeyStore implements KeyStore {
  private readonly accounts = new Map<string, AccountRecord>();
  /** The ids of deleted accounts: never an account's again (KeyStore.deleteAccount). */
  private readonly retired = new Set<string>();
  private readonly keys = new Map<string, ApiKeyRecord>();
  private readonly listeners = new InvalidationListeners();

  async putAccount(account: AccountRecord): Promise<void> {
    this.accounts.set(account.id, structuredClone(account));
  }

  async replaceAccount(account: AccountRecord, expected: AccountRecord | null): Promise<boolean> {
    const stored = this.accounts.get(account.id);
    if (!sameRecord(stored, expected)) return false;
    if (expected === null && this.retired.has(account.id)) return false;
    refuseClaimed(this.accounts.values(), account, stored);
    this.accounts.set(account.id, structuredClone(account));
    return true;
  }

  async deleteAccount(expected: AccountRecord): Promise<string[] | null> {
    if (!sameRecord(this.accounts.get(expected.id), expected)) return null;
    this.accounts.delete(expected.id);
    this.retired.add(expected.id);
    return this.dropKeys(expected.id);
  }

  /** The account's keys deleted (KeyStore.deleteAccount); their ids. */
  private dropKeys(accountId: string): string[] {
    const gone = [...this.keys.values()].filter((key) => key.accountId === accountId).map((key) => key.id);
    for (const id of gone) this.keys.delete(id);
    return gone;
  }

  async getAccount(id: string): Promise<AccountRecord | null> {
    return copyOrNull(this.accounts.get(id));
  }

  async listAccounts(): Promise<AccountRecord[]> {
    return byCreation(structuredClone([...this.accounts.values()]));
  }

  async putKey(key: ApiKeyRecord): Promise<void> {
    this.keys.set(key.id, structuredClone(key));
  }

  async replaceKey(key: ApiKeyRecord, expected: ApiKeyRecord): Promise<boolean> {
    if (!sameRecord(this.keys.get(key.id), expected)) return false;
    this.keys.set(key.id, structuredClone(key));
    return true;
  }

  async getKey(id: string): Promise<ApiKeyRecord | null> {
    return copyOrNull(this.keys.get(id));
  }

  getKeyWithAccount(id: string): Promise<{ key: ApiKeyRecord; account: AccountRecord } | null> {
    return keyWithAccount(this, id);
  }

  async listKeys(accountId?: string): Promise<ApiKeyRecord[]> {
    const keys = [...this.keys.values()].filter((key) => accountId === undefined || key.accountId === accountId);
    return byCreation(structuredClone(keys));
  }

  async publishInvalidation(keyId: string): Promise<void> {
    this.listeners.notify(keyId);
  }

  onInvalidation(listener: (keyId: string | null) => void): void {
    this.listeners.add(listener);
  }
}
