/**
 * The operator's operations on accounts and keys: one layer under both the key CLI
 * (src/cli/keys.ts) and the admin API (src/admin/routes/); webhook deliveries beside it
 * (webhook-service.ts). It refuses with a `Refusal` (the CLI prints it, the API answers its
 * problem); every change that affects authentication reaches every gateway instance at once (the
 * key store's invalidation).
 */
import type { KeyService, IssueKeyInput } from '../keys/key-service.js';
import { isDisabled } from '../keys/key-service.js';
import { Refusal, refusingClaimed } from '../keys/refusal.js';
import type { AccountRecord, ApiKeyRecord, KeyStore } from '../stores/types.js';
import type { WebhookOutbox, WebhookStore } from '../stores/webhook-types.js';
import { updateIfUnchanged } from '../stores/update-if-unchanged.js';

/** The longest grace a rotation may give the old key, for the CLI and the admin API alike. */
export const MAX_GRACE_SECONDS = 30 * 86_400;

export interface AdminServiceDeps {
  keys: KeyService;
  store: KeyStore;
  now?: () => number;
  /**
   * The webhook store's clock for an account: when an account is enabled again is compared with
   * snapshot stamps taken on it (the change detector's baseline), whichever instance enabled it.
   */
  clock?: (accountId: string) => Promise<number>;
  /** An account deleted loses its webhook endpoint, snapshot, delivery log and event counter (absent: a caller that never deletes). */
  webhooks?: Pick<WebhookStore, 'forgetAccount'>;
  outbox?: Pick<WebhookOutbox, 'forgetAccount'>;
  /** The backend's check of an upstream id an operator maps an account to (src/backend/registry.ts upstreamIdCheck). */
  upstreamIdProblem?: (upstreamId: string) => string | undefined;
}

export interface AccountChanges {
  name?: string;
  upstreamId?: string;
}

export interface IssuedKey {
  record: ApiKeyRecord;
  /** The full key: shown once. */
  key: string;
}

export class AdminService {
  private readonly now: () => number;

  constructor(private readonly deps: AdminServiceDeps) {
    this.now = deps.now ?? Date.now;
  }

  // ---- accounts ---------------------------------------------------------------------------------

  /**
   * Why the backend could never serve an account mapped to `upstreamId` (`must be …`), for the edges
   * to refuse it as malformed input: `01` or ` 1` for client 1 would be stored, fail every request,
   * and claim a spelling of its own beside the customer's.
   */
  upstreamIdProblem(upstreamId: string): string | undefined {
    return this.deps.upstreamIdProblem?.(upstreamId);
  }

  createAccount(input: { id: string; name: string; upstreamId: string }): Promise<AccountRecord> {
    return this.deps.keys.createAccount(input);
  }

  async account(id: string): Promise<AccountRecord> {
    const account = await this.deps.store.getAccount(id);
    if (!account) throw new Refusal('unknown', `unknown account ${id}`);
    return account;
  }

  /** Oldest first. */
  listAccounts(): Promise<AccountRecord[]> {
    return this.deps.store.listAccounts();
  }

  /** A new name or upstream customer; the account's keys serve the new customer from the next request. */
  async updateAccount(id: string, changes: AccountChanges): Promise<AccountRecord> {
    const { after } = await this.changeAccount(id, (account) => ({
      ...account,
      ...(changes.name === undefined ? {} : { name: changes.name }),
      ...(changes.upstreamId === undefined ? {} : { upstreamId: changes.upstreamId }),
    }));
    // Announced whenever it is asked for, changed or not: a retry after a lost announcement finds the
    // change written already, and other instances would keep their copies until their time to live.
    if (changes.upstreamId !== undefined) await this.invalidateKeysOf(id);
    return after;
  }

  /**
   * Disabled: every key of the account answers 401 from the next request, on every instance (each
   * key's cached lookup is dropped); no key can be issued or rotated for it. Enabled: they work again.
   * Doing either twice changes nothing but the announcement (a disabled account keeps when it was disabled).
   */
  async setAccountDisabled(id: string, disabled: boolean): Promise<AccountRecord> {
    const now = new Date(this.deps.clock ? await this.deps.clock(id) : this.now()).toISOString();
    const { after } = await this.changeAccount(id, (account) => {
      if (isDisabled(account) === disabled) return account;
      return disabled ? { ...account, disabledAt: now } : { ...account, disabledAt: null, enabledAt: now };
    });
    // Even unchanged, as updateAccount: a retry must announce what a failed attempt wrote.
    await this.invalidateKeysOf(id);
    return after;
  }

  /**
   * Offboarding: the account, every key of it, its webhook endpoint, delivery log and event
   * counter are gone, and its upstream customer is free for another account. Its keys answer 401
   * from the next request on every instance (each key's cached lookup is dropped, as for a disabled
   * account). The webhook data goes first: a deletion that failed after it is done again by the
   * operator's retry. And again after the account: a delivery ending in between logged its entry.
   */
  async deleteAccount(id: string): Promise<AccountRecord> {
    await this.account(id);
    await this.forgetWebhooksOf(id);
    let keys: string[] = [];
    const { before } = await updateIfUnchanged({
      read: () => this.account(id),
      change: (account) => account,
      // A change in between (a rename, a disable) is read again and the deletion made over it.
      write: async (account) => {
        const deleted = await this.deps.store.deleteAccount(account);
        if (deleted !== null) keys = deleted;
        return deleted !== null;
      },
    });
    await Promise.all(keys.map((keyId) => this.deps.keys.invalidate(keyId)));
    await this.forgetWebhooksOf(id);
    return before;
  }

  private async forgetWebhooksOf(accountId: string): Promise<void> {
    await Promise.all([this.deps.webhooks?.forgetAccount(accountId), this.deps.outbox?.forgetAccount(accountId)]);
  }

  /**
   * Another operator's change landing in between (a rename racing a disable) is kept, and this one
   * is made again on top of it. An unchanged account is not written.
   */
  private changeAccount(id: string, change: (account: AccountRecord) => AccountRecord): Promise<{ before: AccountRecord; after: AccountRecord }> {
    return updateIfUnchanged({
      read: () => this.account(id),
      change,
      write: async (after, before) => after === before || (await refusingClaimed(this.deps.store.replaceAccount(after, before))),
    });
  }

  private async invalidateKeysOf(accountId: string): Promise<void> {
    const keys = await this.deps.store.listKeys(accountId);
    await Promise.all(keys.map((key) => this.deps.keys.invalidate(key.id)));
  }

  // ---- keys -------------------------------------------------------------------------------------

  /**
   * With `keyId` (an idempotent retry's, see src/admin/schemas.ts), a key an earlier attempt left
   * under that id, whose answer was never recorded, is replaced: one key, with this answer's secret.
   */
  async issueKey(input: IssueKeyInput): Promise<IssuedKey> {
    const left = input.keyId === undefined ? null : await this.deps.store.getKey(input.keyId);
    // An earlier attempt's key revoked since (its answer may have reached the caller, who revoked
    // it): issuing it again would bring it back.
    if (left?.revokedAt != null) throw new Refusal('key_inactive', `key ${left.id} was revoked (since ${left.revokedAt}); issue a new key instead`);
    const issued = await this.deps.keys.issue(input);
    if (left !== null) await this.deps.keys.invalidate(issued.record.id);
    return issued;
  }

  /** One account's keys (the account must exist), or every key; never a secret. */
  async listKeys(accountId?: string): Promise<ApiKeyRecord[]> {
    if (accountId !== undefined) await this.account(accountId);
    return this.deps.keys.list(accountId);
  }

  async key(keyId: string): Promise<ApiKeyRecord> {
    const key = await this.deps.store.getKey(keyId);
    if (!key) throw new Refusal('unknown', `unknown key ${keyId}`);
    return key;
  }

  /** A successor (its id given, as for issueKey, or random) works at once; the old key for `graceMs` more. */
  async rotateKey(keyId: string, graceMs: number, successorId?: string): Promise<IssuedKey & { old: ApiKeyRecord }> {
    const rotated = await this.deps.keys.rotate(keyId, graceMs, successorId);
    if (rotated.replaced) await this.deps.keys.invalidate(rotated.record.id);
    return rotated;
  }

  /** Refused at once on every instance; revoking a revoked key keeps its time. */
  revokeKey(keyId: string): Promise<ApiKeyRecord> {
    return this.deps.keys.revoke(keyId);
  }
}
