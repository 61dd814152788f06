/**
 * The gateway's local state sits behind these interfaces (the webhooks' in webhook-types.ts). Each
 * has a memory and a Redis implementation that pass one shared conformance suite (test/stores/).
 */
import type { Scope } from '../keys/scopes.js';
import type { WebhookOutbox, WebhookStore } from './webhook-types.js';

// ---- errors ---------------------------------------------------------------------------------

/** The store could not be reached or did not answer in time. Callers decide fail-open or closed. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * A write would map a second account to an upstream customer that `holder` is mapped to already
 * (contract §1: one customer, one account). Nothing was written.
 */
export class UpstreamClaimedError extends Error {
  constructor(
    readonly upstreamId: string,
    readonly holder: string,
  ) {
    super(`upstream customer ${upstreamId} is mapped to account ${holder}`);
    this.name = 'UpstreamClaimedError';
  }
}

// ---- rate limits (contract §4) --------------------------------------------------------------

/**
 * GCRA: `ratePerMinute` sustained, `burst` extra requests allowed at once from rest: a key at rest
 * may send burst + 1 at once, then one per minute / rate; never more than rate + burst per minute.
 */
export interface GcraPolicy {
  ratePerMinute: number;
  burst: number;
  /** Length of the "minute"; 60 000 unless shortened for tests and demos (config `rateLimits.windowMs`). */
  periodMs?: number;
}

/** At most `limit` requests in any rolling window of `windowMs`. */
export interface WindowPolicy {
  limit: number;
  windowMs: number;
}

export type PolicyName = 'ip_minute' | 'key_minute' | 'key_day' | 'account_minute';

export interface PolicyState {
  name: PolicyName;
  /** The full quota. For the GCRA `key_minute` it is burst + 1, what a key at rest may send at once. */
  limit: number;
  /** Requests still allowed now (after this request, when it was allowed). */
  remaining: number;
  /** Milliseconds until the policy is back to its full quota. */
  resetMs: number;
  windowSeconds: number;
  /** The configured quota per window (for `key_minute` the sustained rate, 60 per 60 s by default). */
  quota: number;
  /** `key_minute` only: the requests allowed at once on top of the sustained rate. */
  burst?: number;
}

export interface RateDecision {
  allowed: boolean;
  /** The policies that refused the request (empty when allowed). */
  violated: PolicyName[];
  /** When refused: milliseconds until a retry can succeed; null when none can today (never for these policies). */
  retryAfterMs: number | null;
  policies: PolicyState[];
}

export interface KeyLimitRequest {
  accountId: string;
  keyId: string;
  perMinute: GcraPolicy;
  perDay: number;
  /** Profile A only: the account's rolling-minute limit across all its keys. */
  accountPerMinute: WindowPolicy | null;
}

export type LimitRule =
  /** GCRA: one request per `intervalMs` sustained, `burst` more at once from rest. */
  | { kind: 'gcra'; intervalMs: number; burst: number }
  /** A fixed counter per UTC calendar day. */
  | { kind: 'day'; limit: number }
  /** At most `limit` in any rolling `windowMs`, exact (a log of the admitted requests' times). */
  | { kind: 'log'; limit: number; windowMs: number };

/** One policy to check: its rule, the counter it keeps its state in, and what it reports. */
export interface PolicyCheck {
  name: PolicyName;
  /**
   * The counter's identity. Redis uses it as the key (after its prefix): the hash tag puts every
   * counter of one account (or one IP) in the same cluster slot, so one script can touch them all.
   * Policies of one group may share a counter (a key's minute and day limits), one of each kind; a
   * `log` counter is never shared.
   */
  counter: string;
  rule: LimitRule;
  limit: number;
  windowSeconds: number;
  /** What RateLimit-Policy advertises: the configured quota per window (and, for GCRA, its burst). */
  quota: number;
  burst?: number;
  /**
   * Reported only when it refuses (the source address's window: contract §3 reports the key's): while
   * it allows, a store may count it from a bound, its `remaining` then at most the exact one.
   */
  reportedOnlyWhenRefused?: true;
}

/** Policies checked and consumed together, all-or-nothing (see RateLimitStore.hit). */
export type PolicyGroup = readonly PolicyCheck[];

export interface RateLimitStore {
  /**
   * One decision over groups of policies (src/stores/rate-policies.ts builds them), atomic and in
   * one round trip where the store allows it. Groups are evaluated in order, each all-or-nothing:
   * every policy of a group is checked, and only when all allow is the request consumed from all
   * of them, so a refused group consumes nothing. A refused group ends the evaluation: the groups
   * after it are neither checked nor consumed, and `policies` holds the states of the groups
   * checked, in order. The source-IP group comes first: refused there, the key and account limits
   * are not even looked at; allowed there, the request counts for the IP whatever the key's
   * limits answer.
   */
  hit(groups: readonly PolicyGroup[]): Promise<RateDecision>;
}

// ---- idempotency (contract §5) --------------------------------------------------------------

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface IdempotencyScope {
  accountId: string;
  key: string;
}

export interface BeginRequest extends IdempotencyScope {
  /** SHA-256 over method, route, path parameters and canonical body. */
  fingerprint: string;
  /** Method and route template, e.g. `POST /v1/orders`: another endpoint with the same key conflicts. */
  endpoint: string;
  /** How long the claim holds before another request may take over (upstream timeout + margin). */
  leaseMs: number;
  /**
   * After a write-ahead mark, how long upstream may still be working on the write it announced:
   * until sentAt + settleMs no other request may take the key over (it answers in progress).
   */
  settleMs: number;
  /** How long the record is kept at all (longer only while a write announced near its end settles). */
  retentionMs: number;
  /** Profile A: after this age any use of the key is stale (410). Null: no stale phase (Profile B). */
  staleAfterMs: number | null;
}

export type BeginResult =
  /**
   * The caller holds the key and must execute. `recordId` names this use of the key (kept across
   * retries, new when the key is reused after its record expired). `sentAt` is the time of an
   * earlier attempt's write-ahead mark: that attempt may have acted, so find out what it did first.
   * Null: nothing was ever sent for this record, so it may be executed fresh.
   */
  | { kind: 'acquired'; token: string; recordId: string; sentAt: number | null }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'in_progress'; retryAfterMs: number }
  | { kind: 'conflict' }
  | { kind: 'stale' };

export interface IdempotencyStore {
  begin(request: BeginRequest): Promise<BeginResult>;
  /** Stores the definitive response. Ignored when the token no longer holds the key. */
  complete(scope: IdempotencyScope, token: string, response: StoredResponse): Promise<void>;
  /**
   * Nothing was executed by this attempt: forget it. A record with a write-ahead mark is kept
   * (as markUnknown does): an earlier attempt may have acted.
   */
  release(scope: IdempotencyScope, token: string): Promise<void>;
  /** The backend may have executed it: keep the record, drop the lease so a retry reconciles. */
  markUnknown(scope: IdempotencyScope, token: string): Promise<void>;
  /**
   * Write-ahead: records, with the store's clock, that a write whose outcome cannot be observed is
   * about to be sent, and renews the lease for `leaseMs`; the record is kept at least the holder's
   * settleMs from now, however little of its retention is left. False when `token` no longer holds
   * the key (its lease ran out and another request took it over): then nothing may be sent.
   */
  markSent(scope: IdempotencyScope, token: string, leaseMs: number): Promise<boolean>;
  /**
   * Takes back this token's write-ahead mark when markSent failed (too few replicas acknowledged
   * it, or its reply was lost) and the caller sent nothing under this token. Only a mark this token
   * set over none: an earlier attempt's mark, which may have preceded a write, stays.
   */
  unmarkSent(scope: IdempotencyScope, token: string): Promise<void>;
}

// ---- keys and accounts (contract §1) --------------------------------------------------------

export interface KeyRateLimitOverrides {
  perMinute?: number;
  burst?: number;
  perDay?: number;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string;
  scopes: Scope[];
  /** HMAC-SHA-256 (server pepper) of the secret part, hex. The secret itself is never stored. */
  secretHash: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  /**
   * Set when the revocation took effect as it was made (a revoke, a rotation without grace), not at
   * a later time: refused by every instance whatever its clock, as `revokedAt` is the revoking
   * instance's time, which another instance's clock may not have reached yet. Absent otherwise.
   */
  revokedNow?: true;
  rateLimits: KeyRateLimitOverrides | null;
}

export interface AccountRecord {
  id: string;
  name: string;
  /** The one upstream customer this account maps to, in the backend's own id (WHMCS clientid, FOSSBilling client id, v1 upstream account). */
  upstreamId: string;
  createdAt: string;
  /**
   * Set while the account is disabled: every one of its keys is refused (401). Absent on records
   * written before accounts could be disabled, which reads as enabled.
   */
  disabledAt?: string | null;
  /**
   * When the account was last enabled after being disabled (absent if never): the change detector
   * starts it over from a new baseline even when no pass of its saw it disabled.
   */
  enabledAt?: string | null;
}

export interface KeyStore {
  /** Unconditional (restores, fixtures): neither compared nor refused; the claims on upstream customers are kept all the same. */
  putAccount(account: AccountRecord): Promise<void>;
  /**
   * Writes the account only if the stored one is still `expected` (null: none is stored), as the
   * caller read it; false when another write came in between, and nothing is written. Two operators
   * at once must not undo each other (a rename racing a disable re-enabling the account). Rejects
   * with UpstreamClaimedError, nothing written, when the account would move to (or be created on) an
   * upstream customer another account is mapped to; checked and written atomically, so of two such
   * writes at once one wins. A write that keeps the stored customer is never refused. A creation
   * (`expected` null) under the id of a deleted account is refused (false): an account id is never
   * another tenant's, since what is kept under it (idempotency records and the answers they
   * replay, logs, audit lines) would reach the new holder.
   */
  replaceAccount(account: AccountRecord, expected: AccountRecord | null): Promise<boolean>;
  /**
   * Deletes the account with every key of it, and its claim on its upstream customer (free for
   * another account at once), and retires its id, in one step; only while the stored account is still `expected`, as
   * the caller read it. The ids of the keys deleted; null when another write came in between or the
   * account is gone, and nothing is deleted.
   */
  deleteAccount(expected: AccountRecord): Promise<string[] | null>;
  getAccount(id: string): Promise<AccountRecord | null>;
  listAccounts(): Promise<AccountRecord[]>;
  putKey(key: ApiKeyRecord): Promise<void>;
  /**
   * Writes the key only if the stored one is still `expected`, as the caller read it; false when
   * another write came in between, and nothing is written (a revocation racing a rotation's grace
   * must not be undone).
   */
  replaceKey(key: ApiKeyRecord, expected: ApiKeyRecord): Promise<boolean>;
  getKey(id: string): Promise<ApiKeyRecord | null>;
  /** A key with its account, as authentication needs them (one round trip where the store allows it); null when either is missing. */
  getKeyWithAccount(id: string): Promise<{ key: ApiKeyRecord; account: AccountRecord } | null>;
  listKeys(accountId?: string): Promise<ApiKeyRecord[]>;
  /** Tells every gateway instance to drop its cached copy of the key (revocation, rotation). */
  publishInvalidation(keyId: string): Promise<void>;
  /**
   * Hears each key invalidated, and `null` when invalidations may have been missed (the
   * subscription broke): every copy held must then be confirmed by the store before it is used.
   */
  onInvalidation(listener: (keyId: string | null) => void): void;
  /**
   * A store shared by separately configured processes (Redis) keeps a fingerprint of the key pepper
   * its keys are hashed with: true when `fingerprint` is that one. None stored yet: recorded when
   * `record` (the default), else null (keys of the previous release, which recorded none, may be
   * hashed with another). One of `previous` stored (keys.previousPeppers'): `fingerprint` takes its
   * place, and true. Absent where one process's config is the only one (the memory stores).
   */
  holdsPepper?(fingerprint: string, record?: boolean, previous?: readonly string[]): Promise<boolean | null>;
}

// ---- the set a deployment runs with ---------------------------------------------------------

export interface Stores {
  kind: 'memory' | 'redis';
  rateLimits: RateLimitStore;
  idempotency: IdempotencyStore;
  keys: KeyStore;
  webhooks: WebhookStore;
  webhookOutbox: WebhookOutbox;
  /** True when the store answers; used by the health check. Must not throw. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
