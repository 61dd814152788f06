/**
 * The key records a process holds, so that a request is authenticated without asking the store.
 * Revocation and rotation publish an invalidation so every instance drops its copy at once, and when
 * the store says invalidations may have been missed (its subscription broke), every copy is
 * confirmed by the store before its next use. A key in use is read again in the background once its
 * copy is three quarters of `cacheTtlMs` old, so its requests never wait for the store (a copy is
 * still never used past `cacheTtlMs` without the store's answer). While the store is unreachable, a
 * copy the store confirmed within `staleIfErrorMs` keeps serving (stale if error), so reads go on
 * through a Redis outage; a key never seen (or invalidated) meets the store error instead.
 */
import { LRUCache } from 'lru-cache';
import type { StoreObserver } from '../ops/observers.js';
import { StoreUnavailableError } from '../stores/types.js';
import type { AccountRecord, KeyStore } from '../stores/types.js';
import type { AuthenticatedKey } from './key-service.js';

export interface HeldKey extends AuthenticatedKey {
  /** When the store last answered with this record (`now()`). */
  readAt: number;
  /**
   * SHA-256 of the secret last found to match `key.secretHash`: the same secret again is checked
   * against it (one hash, constant-time compare) instead of a new HMAC. Held as a 32-character
   * latin1 string (48 bytes), not a Buffer (about 400 with its ArrayBuffer), in each of thousands of copies.
   */
  verified?: string;
}

export interface HeldKeysOptions {
  /** How long a looked-up record is used without asking the store again. */
  cacheTtlMs?: number;
  /** How long after the store's last answer a record may stand in while the store is down (0: never). */
  staleIfErrorMs?: number;
  now?: () => number;
  /** Hears store errors met by lookups, and stale copies served in their place (metrics). */
  observer?: StoreObserver;
}

/** How many keys' copies a process holds. */
const HELD_KEYS = 10_000;

/** Share of cacheTtlMs after which a key in use is read again in the background. */
const REFRESH_AHEAD = 0.75;

export class HeldKeys {
  private readonly cache: LRUCache<string, HeldKey>;
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
    options: HeldKeysOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.freshMs = options.cacheTtlMs ?? 5_000;
    this.staleIfErrorMs = options.staleIfErrorMs ?? 0;
    this.observer = options.observer;
    // Bounded by count only: every use checks the copy's age itself (isFreshCopy, staleIfErrorMs),
    // so a time to live here would only add a clock read and its bookkeeping to every lookup.
    this.cache = new LRUCache<string, HeldKey>({ max: HELD_KEYS });
    // At most one account a key held.
    this.accounts = new LRUCache<string, AccountRecord>({ max: HELD_KEYS });
    store.onInvalidation((keyId) => this.forget(keyId));
  }

  /** Drops the key's copy; `null` (invalidations may have been missed): every copy must be read again. */
  forget(keyId: string | null): void {
    this.invalidations += 1;
    // The copies stay for stale-if-error (the subscription usually breaks with the store).
    if (keyId === null) this.unconfirmedBefore = this.now();
    else this.cache.delete(keyId);
  }

  private isFreshCopy(held: HeldKey, at: number): boolean {
    return at - held.readAt < this.freshMs && held.readAt > this.unconfirmedBefore;
  }

  /** Whether the copy may be used at `at` without asking the store; one due is read again in the background. */
  private serves(keyId: string, held: HeldKey, at: number): boolean {
    if (!this.isFreshCopy(held, at)) return false;
    if (at - held.readAt >= this.freshMs * REFRESH_AHEAD) this.refresh(keyId);
    return true;
  }

  /**
   * The copy when it may be used without asking the store (the hot path: no promise, one cache
   * lookup), read again in the background when due; undefined when the store must be asked.
   */
  fresh(keyId: string): HeldKey | undefined {
    const held = this.cache.get(keyId);
    return held !== undefined && this.serves(keyId, held, this.now()) ? held : undefined;
  }

  /** The copy, from the store unless fresh; null when the store knows no such key. */
  async lookup(keyId: string): Promise<HeldKey | null> {
    const held = this.cache.get(keyId);
    const startedAt = this.now();
    if (held !== undefined && this.serves(keyId, held, startedAt)) return held;
    try {
      return await this.readAndKeep(keyId, startedAt);
    } catch (error) {
      // Store down: the copy it confirmed last stands in, unless too old. The copy held now, not the
      // one held before the read: an invalidation (revocation) received during the read has deleted
      // it, so a revoked key is never served from here.
      if (!(error instanceof StoreUnavailableError)) throw error;
      this.observer?.storeError('keys');
      const current = this.cache.get(keyId);
      if (!current || startedAt - current.readAt > this.staleIfErrorMs) throw error;
      this.observer?.storeFallback('keys', 'stale');
      return current;
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

  private async readAndKeep(keyId: string, startedAt: number): Promise<HeldKey | null> {
    const invalidationsBefore = this.invalidations;
    const found = await this.store.getKeyWithAccount(keyId);
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
    const entry: HeldKey = {
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
}

/** Records read from the store as JSON: equal when their JSON is (the store keeps the field order). */
function sameRecord(a: object, b: object): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
