/**
 * The operator's operations on accounts, keys and webhook deliveries: one layer under both the key
 * CLI (src/cli/keys.ts) and the admin API (src/admin/routes/). It refuses with a `Refusal` (the CLI
 * prints it, the API answers its problem); every change that affects authentication reaches every
 * gateway instance at once (the key store's invalidation).
 */
import type { KeyService, IssueKeyInput } from '../keys/key-service.js';
import { isDisabled } from '../keys/key-service.js';
import { Refusal } from '../keys/refusal.js';
import type { AccountRecord, ApiKeyRecord, DeliveryLogEntry, KeyStore, WebhookRecord, WebhookStore } from '../stores/types.js';
import type { WebhookEvents } from '../webhooks/emitter.js';

export interface AdminServiceDeps {
  keys: KeyService;
  store: KeyStore;
  webhooks: WebhookStore;
  /** Replays go through it, so the local delivery worker wakes at once. */
  events: WebhookEvents;
  now?: () => number;
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
    const account = await this.account(id);
    const updated: AccountRecord = {
      ...account,
      ...(changes.name === undefined ? {} : { name: changes.name }),
      ...(changes.upstreamId === undefined ? {} : { upstreamId: changes.upstreamId }),
    };
    await this.deps.store.putAccount(updated);
    if (updated.upstreamId !== account.upstreamId) await this.invalidateKeysOf(id);
    return updated;
  }

  /**
   * Disabled: every key of the account answers 401 from the next request, on every instance (each
   * key's cached lookup is dropped); no key can be issued or rotated for it. Enabled: they work again.
   * Doing either twice changes nothing (a disabled account keeps when it was disabled).
   */
  async setAccountDisabled(id: string, disabled: boolean): Promise<AccountRecord> {
    const account = await this.account(id);
    if (isDisabled(account) === disabled) return account;
    const updated: AccountRecord = { ...account, disabledAt: disabled ? new Date(this.now()).toISOString() : null };
    await this.deps.store.putAccount(updated);
    await this.invalidateKeysOf(id);
    return updated;
  }

  private async invalidateKeysOf(accountId: string): Promise<void> {
    const keys = await this.deps.store.listKeys(accountId);
    await Promise.all(keys.map((key) => this.deps.store.publishInvalidation(key.id)));
  }

  // ---- keys -------------------------------------------------------------------------------------

  /**
   * With `keyId` (an idempotent retry's, see src/admin/schemas.ts), a key an earlier attempt left
   * under that id, whose answer was never recorded, is replaced: one key, with this answer's secret.
   */
  async issueKey(input: IssueKeyInput): Promise<IssuedKey> {
    const replaces = await this.leftBehind(input.keyId);
    const issued = await this.deps.keys.issue(input);
    if (replaces) await this.deps.store.publishInvalidation(issued.record.id);
    return issued;
  }

  private async leftBehind(keyId: string | undefined): Promise<boolean> {
    return keyId !== undefined && (await this.deps.store.getKey(keyId)) !== null;
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
    const replaces = await this.leftBehind(successorId);
    const rotated = await this.deps.keys.rotate(keyId, graceMs, successorId);
    if (replaces) await this.deps.store.publishInvalidation(rotated.record.id);
    return rotated;
  }

  /** Refused at once on every instance; revoking a revoked key keeps its time. */
  revokeKey(keyId: string): Promise<ApiKeyRecord> {
    return this.deps.keys.revoke(keyId);
  }

  // ---- webhooks ---------------------------------------------------------------------------------

  /** The account's endpoint (URL, status, last delivery); refused when the account or the endpoint is unknown. */
  async webhook(accountId: string): Promise<WebhookRecord> {
    await this.account(accountId);
    const record = await this.deps.webhooks.get(accountId);
    if (!record) throw new Refusal('unknown', `account ${accountId} has no webhook endpoint`);
    return record;
  }

  /** A page of the account's delivery log, newest first. */
  async deliveries(accountId: string, offset: number, limit: number): Promise<{ entries: DeliveryLogEntry[]; total: number }> {
    await this.account(accountId);
    return this.deps.webhooks.listDeliveries(accountId, offset, limit);
  }

  /**
   * Sends a failed (or dropped) event again, with the same id and payload and a fresh retry
   * schedule. The endpoint must be there and enabled: enable it first.
   */
  async replayDelivery(accountId: string, eventId: string): Promise<DeliveryLogEntry> {
    const record = await this.webhook(accountId);
    const entry = await this.deps.webhooks.getDelivery(accountId, eventId);
    if (!entry) throw new Refusal('unknown', `account ${accountId} has no logged event ${eventId}`);
    if (entry.state !== 'failed' && entry.state !== 'dropped') {
      throw new Refusal('webhook_state', `event ${eventId} is ${entry.state}; only a failed or dropped event can be replayed`);
    }
    if (record.status === 'disabled') {
      throw new Refusal('webhook_state', `the webhook endpoint of account ${accountId} is disabled; enable it first`);
    }
    return this.deps.events.replay(accountId, entry);
  }

  /** Enables a disabled endpoint (its URL and secret kept); its failing run starts afresh. */
  async enableWebhook(accountId: string): Promise<WebhookRecord> {
    await this.webhook(accountId);
    const enabled = await this.deps.webhooks.enable(accountId);
    if (!enabled) throw new Refusal('unknown', `account ${accountId} has no webhook endpoint`);
    return enabled;
  }
}
