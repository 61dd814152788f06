/**
 * Issuing, rotating, revoking and checking API keys. Used by the gateway (authenticate) and the
 * operator CLI (the rest). Lookups are cached in process; revocation and rotation publish an
 * invalidation so every instance drops its copy at once, and when the store says invalidations may
 * have been missed (its subscription broke), every copy is confirmed by the store before its next use. A key in use is read again in
 * the background once its copy is three quarters of `cacheTtlMs` old, so its requests never wait
 * for the store (a copy is still never used past `cacheTtlMs` without the store's answer). While the store
 * is unreachable, a copy the store confirmed within `staleIfErrorMs` keeps serving (stale if
 * error), so reads go on through a Redis outage; a key never seen (or invalidated) meets the store
 * error instead.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { StoreObserver } from '../ops/observers.js';
import { StoreUnavailableError } from '../stores/types.js';
import type { AccountRecord, ApiKeyRecord, KeyRateLimitOverrides, KeyStore } from '../stores/types.js';
import type { Scope } from './scopes.js';
import { generateApiKey, parseApiKey, secretMatches, hashSecret } from './api-key.js';
import { Refusal } from './refusal.js';

export interface AuthenticatedKey {
  key: ApiKeyRecord;
  account: AccountRecord;
}

export type AuthFailure = 'malformed' | 'unknown' | 'revoked' | 'expired' | 'account_disabled';

export interface IssueKeyInput {
  accountId: string;
  name: string;
  scopes: Scope[];
  expiresAt?: string | null;
  rateLimits?: KeyRateLimitOverrides | null;
  /**
   * The key id to use instead of a random one (the admin API derives it from the idempotency
   * record, so that a retry after a lost answer cannot make a second key).
   */
  keyId?: string;
}

interface CachedLookup extends AuthenticatedKey {
  /** When the store last answered with this record (`now()`). */
  readAt: number;
  /**
   * SHA-256 of the secret last found to match `key.secretHash`: the same secret again is checked
   * against it (one hash, constant-time compare) instead of a new HMAC. Held as a 32-character
   * latin1 string (48 bytes), not a Buffer (about 400 with its ArrayBuffer), in each of thousands of copies.
   */
  verified?: string;
}

/**
 * The two digests as bytes, for the compare (SHA-256: 32): scratch buffers, written synchronously
 * and so never shared between two checks. The digest is made as text: a Buffer from `hash` costs
 * more than the hash itself (Node 20: 1.5 µs a call against 0.4 for 'binary', latin1, text).
 */
const VERIFIED_BYTES = Buffer.alloc(32);
const DIGEST_BYTES = Buffer.alloc(32);

/** How many keys' copies a process holds. */
const HELD_KEYS = 10_000;

/** Share of cacheTtlMs after which a key in use is read again in the background. */
const REFRESH_AHEAD = 0.75;

export interface KeyServiceOptions {
  /** How long a looked-up record is used without asking the store again. */
  cacheTtlMs?: number;
  /** How long after the store's last answer a record may stand in while the store is down (0: never). */
  staleIfErrorMs?: number;
  now?: () => number;
  /** Hears store errors met by lookups, and stale copies served in their place (metrics). */
  observer?: StoreObserver;
}

export class KeyService {
  private readonly cache: LRUCache<string, CachedLookup>;
  private readonly freshMs: number;
  private readonly staleIfErrorMs: number;
  private readonly now: () => number;
  private readonly observer: StoreObserver | undefined;
  /** Counts invalidations: a lookup that overlapped one may have read the old record, so it is not cached. */
  private invalidations = 0;
  /** Copies read before this (`now()`) may have missed an invalidation: confirmed again before use. */
  private unconfirmedBefore = -Infinity;
  /** Key ids being read again in the background. */
  private readonly refreshing = new Set<string>();
  /**
   * The account records the copies hold, by account id: the keys of one account share one copy of
   * an unchanged record instead of one each (thousands of keys held over fewer accounts).
   */
  private readonly accounts: LRUCache<string, AccountRecord>;

  constructor(
    private readonly store: KeyStore,
    private readonly pepper: string,
    options: KeyServiceOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.freshMs = options.cacheTtlMs ?? 5_000;
    this.staleIfErrorMs = options.staleIfErrorMs ?? 0;
    this.observer = options.observer;
    // Bounded by count only: every use checks the copy's age itself (isFreshCopy, staleIfErrorMs),
    // so a time to live here would only add a clock read and its bookkeeping to every lookup.
    this.cache = new LRUCache<string, CachedLookup>({ max: HELD_KEYS });
    // At most one account a key held.
    this.accounts = new LRUCache<string, AccountRecord>({ max: HELD_KEYS });
    store.onInvalidation((keyId) => this.forget(keyId));
  }

  /** Drops the key's copy; `null` (invalidations may have been missed): every copy must be read again. */
  private forget(keyId: string | null): void {
    this.invalidations += 1;
    // The copies stay for stale-if-error (the subscription usually breaks with the store).
    if (keyId === null) this.unconfirmedBefore = this.now();
    else this.cache.delete(keyId);
  }

  private isFreshCopy(cached: CachedLookup, at: number): boolean {
    return at - cached.readAt < this.freshMs && cached.readAt > this.unconfirmedBefore;
  }

  /**
   * Every instance drops its copy of the key: this one before it answers, the others when the
   * store's invalidation reaches them (pub/sub: milliseconds, never the cache's time to live).
   */
  async invalidate(keyId: string): Promise<void> {
    this.forget(keyId);
    await this.store.publishInvalidation(keyId);
  }

  async authenticate(raw: string): Promise<AuthenticatedKey | AuthFailure> {
    const parsed = parseApiKey(raw);
    if (!parsed) return 'malformed';
    return this.check(await this.lookup(parsed.keyId), parsed.secret);
  }

  /**
   * What `authenticate` would answer, decided now from the copy this process holds when it may use
   * it without asking the store (the hot path: no promise, one parse, one cache lookup); undefined
   * when the store must be asked.
   */
  authenticateHeld(raw: string): AuthenticatedKey | AuthFailure | undefined {
    const parsed = parseApiKey(raw);
    if (!parsed) return undefined;
    const cached = this.cache.get(parsed.keyId);
    const at = this.now();
    if (cached === undefined || !this.isFreshCopy(cached, at)) return undefined;
    if (at - cached.readAt >= this.freshMs * REFRESH_AHEAD) this.refresh(parsed.keyId);
    return this.check(cached, parsed.secret);
  }

  private check(found: CachedLookup | null, secret: string): AuthenticatedKey | AuthFailure {
    // The hash is checked before the key's state so that a guessed id reveals nothing about it.
    if (!found || !this.secretMatches(found, secret)) return 'unknown';
    const { key, account } = found;
    if (key.revokedAt !== null && Date.parse(key.revokedAt) <= this.now()) return 'revoked';
    if (key.expiresAt !== null && Date.parse(key.expiresAt) <= this.now()) return 'expired';
    if (isDisabled(account)) return 'account_disabled';
    return { key, account };
  }

  private secretMatches(found: CachedLookup, secret: string): boolean {
    const digest = hash('sha256', secret, 'binary');
    if (found.verified !== undefined) {
      VERIFIED_BYTES.write(found.verified, 'latin1');
      DIGEST_BYTES.write(digest, 'latin1');
      if (timingSafeEqual(VERIFIED_BYTES, DIGEST_BYTES)) return true;
    }
    if (!secretMatches(secret, found.key.secretHash, this.pepper)) return false;
    found.verified = digest;
    return true;
  }

  private async lookup(keyId: string): Promise<CachedLookup | null> {
    const cached = this.cache.get(keyId);
    const startedAt = this.now();
    if (cached && this.isFreshCopy(cached, startedAt)) {
      if (startedAt - cached.readAt >= this.freshMs * REFRESH_AHEAD) this.refresh(keyId);
      return cached;
    }
    try {
      return await this.readAndKeep(keyId, startedAt);
    } catch (error) {
      // Store down: the copy it confirmed last stands in, unless too old. An invalidation (revocation)
      // received meanwhile has deleted it, so a revoked key is never served from here.
      if (!(error instanceof StoreUnavailableError)) throw error;
      this.observer?.storeError('keys');
      if (!cached || startedAt - cached.readAt > this.staleIfErrorMs) throw error;
      this.observer?.storeFallback('keys', 'stale');
      return cached;
    }
  }

  /** Reads the key again without holding up the request that asked; its copy serves meanwhile. */
  private refresh(keyId: string): void {
    if (this.refreshing.has(keyId)) return;
    this.refreshing.add(keyId);
    this.readAndKeep(keyId, this.now())
      .catch((error: unknown) => {
        // The copy stands until it runs out; the next lookup after that meets the store itself.
        if (error instanceof StoreUnavailableError) this.observer?.storeError('keys');
      })
      .finally(() => this.refreshing.delete(keyId));
  }

  private async readAndKeep(keyId: string, startedAt: number): Promise<CachedLookup | null> {
    const invalidationsBefore = this.invalidations;
    const found = await this.read(keyId);
    // Misses are not cached: a key issued a moment ago must work at once. Unknown-key floods are
    // bounded by the source-IP limit, which runs first.
    if (!found) {
      this.cache.delete(keyId);
      return null;
    }
    const kept = this.invalidations === invalidationsBefore;
    const previous = this.cache.get(keyId);
    // Read again unchanged (the usual case): the copy held is only confirmed. Its objects are
    // long-lived; the ones just read die young, which keeps a steady stream of refreshes cheap.
    if (kept && previous !== undefined && sameRecord(previous.key, found.key) && sameRecord(previous.account, found.account)) {
      previous.readAt = Math.max(previous.readAt, startedAt);
      return previous;
    }
    // A literal with every field, never a spread: V8 (node 20) gives each `{ ...found, readAt }` a
    // hidden class of its own, so thousands of copies meant thousands of classes (memory) and every
    // read of a copy's fields went through the megamorphic lookup (CPU).
    const entry: CachedLookup = {
      key: found.key,
      account: kept ? this.sharedAccount(found.account) : found.account,
      readAt: startedAt,
      // The secret checked against the same hash needs no new HMAC.
      verified: previous?.verified !== undefined && previous.key.secretHash === found.key.secretHash ? previous.verified : undefined,
    };
    // Held under the record's own id: the id parsed from a request is a slice of its Authorization
    // header, and as the cache's key it would keep that whole header, secret included, in memory.
    if (kept && found.key.id === keyId) this.cache.set(found.key.id, entry);
    return entry;
  }

  /** The copy of `account` other keys hold, when unchanged; `account` becomes it otherwise. */
  private sharedAccount(account: AccountRecord): AccountRecord {
    const held = this.accounts.get(account.id);
    if (held !== undefined && sameRecord(held, account)) return held;
    this.accounts.set(account.id, account);
    return account;
  }

  private read(keyId: string): Promise<AuthenticatedKey | null> {
    return this.store.getKeyWithAccount(keyId);
  }


  async createAccount(input: { id: string; name: string; upstreamId: string }): Promise<AccountRecord> {
    if (await this.store.getAccount(input.id)) throw new Refusal('exists', `account ${input.id} already exists`);
    const account: AccountRecord = { ...input, createdAt: new Date(this.now()).toISOString() };
    await this.store.putAccount(account);
    return account;
  }

  /** Returns the record and the full key; the key is never shown again. A disabled account gets none. */
  async issue(input: IssueKeyInput): Promise<{ record: ApiKeyRecord; key: string }> {
    const account = await this.store.getAccount(input.accountId);
    if (!account) throw new Refusal('unknown', `unknown account ${input.accountId}`);
    if (isDisabled(account)) throw new Refusal('account_disabled', `account ${input.accountId} is disabled`);
    const { keyId, secret, key } = generateApiKey(input.keyId);
    const record: ApiKeyRecord = {
      id: keyId,
      accountId: input.accountId,
      name: input.name,
      scopes: [...new Set(input.scopes)],
      secretHash: hashSecret(secret, this.pepper),
      createdAt: new Date(this.now()).toISOString(),
      expiresAt: input.expiresAt ?? null,
      revokedAt: null,
      rateLimits: input.rateLimits ?? null,
    };
    await this.store.putKey(record);
    return { record, key };
  }

  /**
   * Revokes now, or at `at` (a rotation's grace period). A key already revoked by then keeps its
   * earlier time: revoking again never lengthens a key's life, and the record keeps when it ended.
   */
  async revoke(keyId: string, at: Date = new Date(this.now())): Promise<ApiKeyRecord> {
    const record = await this.store.getKey(keyId);
    if (!record) throw new Refusal('unknown', `unknown key ${keyId}`);
    const earlier = record.revokedAt !== null && Date.parse(record.revokedAt) <= at.getTime();
    const revoked = { ...record, revokedAt: earlier ? record.revokedAt : at.toISOString() };
    await this.store.putKey(revoked);
    await this.invalidate(keyId);
    return revoked;
  }

  /**
   * A new key with the same account, scopes and limits; the old one stays valid for `graceMs`.
   * A revoked or expired key is refused: rotating must never give a dead (maybe leaked) key life
   * again. A key already in a grace period keeps its earlier end.
   */
  async rotate(keyId: string, graceMs = 0, successorId?: string): Promise<{ record: ApiKeyRecord; key: string; old: ApiKeyRecord }> {
    const old = await this.store.getKey(keyId);
    if (!old) throw new Refusal('unknown', `unknown key ${keyId}`);
    const now = this.now();
    if (old.revokedAt !== null && Date.parse(old.revokedAt) <= now) {
      throw new Refusal('key_inactive', `key ${keyId} is revoked (since ${old.revokedAt}) and cannot be rotated; issue a new key instead`);
    }
    if (old.expiresAt !== null && Date.parse(old.expiresAt) <= now) {
      throw new Refusal('key_inactive', `key ${keyId} expired at ${old.expiresAt} and cannot be rotated; issue a new key instead`);
    }
    const end = old.revokedAt === null ? now + graceMs : Math.min(Date.parse(old.revokedAt), now + graceMs);
    const issued = await this.issue({
      accountId: old.accountId,
      name: old.name,
      scopes: old.scopes,
      expiresAt: old.expiresAt,
      rateLimits: old.rateLimits,
      ...(successorId === undefined ? {} : { keyId: successorId }),
    });
    const revoked = await this.revoke(keyId, new Date(end));
    return { ...issued, old: revoked };
  }

  list(accountId?: string): Promise<ApiKeyRecord[]> {
    return this.store.listKeys(accountId);
  }

  listAccounts(): Promise<AccountRecord[]> {
    return this.store.listAccounts();
  }
}

export function isDisabled(account: AccountRecord): boolean {
  return account.disabledAt !== undefined && account.disabledAt !== null;
}

/** Records read from the store as JSON: equal when their JSON is (the store keeps the field order). */
function sameRecord(a: object, b: object): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
