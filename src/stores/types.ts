/**
 * The gateway's local state sits behind these interfaces. Each has a memory and a Redis
 * implementation that pass one shared conformance suite (test/stores/).
 */
import type { Scope } from '../keys/scopes.js';

// ---- errors ---------------------------------------------------------------------------------

/** The store could not be reached or did not answer in time. Callers decide fail-open or closed. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
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
  /** How long the record is kept at all. */
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
   * about to be sent, and renews the lease for `leaseMs`. False when `token` no longer holds the
   * key (its lease ran out and another request took it over): then nothing may be sent.
   */
  markSent(scope: IdempotencyScope, token: string, leaseMs: number): Promise<boolean>;
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
  rateLimits: KeyRateLimitOverrides | null;
}

export interface AccountRecord {
  id: string;
  name: string;
  /** The one upstream customer this account maps to (WHMCS clientid). */
  upstreamId: string;
  createdAt: string;
  /**
   * Set while the account is disabled: every one of its keys is refused (401). Absent on records
   * written before accounts could be disabled, which reads as enabled.
   */
  disabledAt?: string | null;
}

export interface KeyStore {
  putAccount(account: AccountRecord): Promise<void>;
  getAccount(id: string): Promise<AccountRecord | null>;
  listAccounts(): Promise<AccountRecord[]>;
  putKey(key: ApiKeyRecord): Promise<void>;
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
}

// ---- webhooks (contract §6) -----------------------------------------------------------------

export interface WebhookDeliveryStatus {
  /** When the attempt ended. */
  at: string;
  /** The receiver's HTTP status; null when it did not answer (refused, unreachable, timed out). */
  httpStatus: number | null;
  /** Attempts made for that event so far. */
  attempts: number;
}

export interface WebhookRecord {
  url: string;
  /** Signing secret, sealed (src/webhooks/secret-box.ts); shown to the client once. */
  secret: string;
  /** After a rotation, the previous secret (sealed) signs too until `previousSecretExpiresAt`. */
  previousSecret: string | null;
  previousSecretExpiresAt: string | null;
  updatedAt: string;
  status: 'enabled' | 'disabled';
  lastDelivery: WebhookDeliveryStatus | null;
  /** Start of the current run of failed attempts; null after a success. */
  failingSince: string | null;
}

export interface WebhookStore {
  get(accountId: string): Promise<WebhookRecord | null>;
  set(accountId: string, record: WebhookRecord): Promise<void>;
  /** Removes the record and the change detector's snapshot. */
  clear(accountId: string): Promise<void>;
  /**
   * Records an attempt on the endpoint: last_delivery, and failing_since set by the first failure
   * of a run and cleared by a success. Does nothing when no URL is set. Returns the record after.
   */
  recordDelivery(accountId: string, delivery: WebhookDeliveryStatus, ok: boolean): Promise<WebhookRecord | null>;
  /** Disables the endpoint (410, or failing too long); setting a URL again enables it. */
  disable(accountId: string): Promise<void>;
  /**
   * Enables a disabled endpoint again and ends its run of failures (failing_since cleared), keeping
   * its URL and secrets. Does nothing when no URL is set. Returns the record after.
   */
  enable(accountId: string): Promise<WebhookRecord | null>;
  /**
   * The account's delivery log: adds the event's entry or replaces it (same event id), keeping
   * the newest `keep` entries (by `createdAt`) and dropping older ones.
   */
  logDelivery(accountId: string, entry: DeliveryLogEntry, keep: number): Promise<void>;
  /** A page of the delivery log, newest first, and how many entries it holds. */
  listDeliveries(accountId: string, offset: number, limit: number): Promise<{ entries: DeliveryLogEntry[]; total: number }>;
  getDelivery(accountId: string, eventId: string): Promise<DeliveryLogEntry | null>;
  /**
   * The change detector's snapshot: sets what it saw of one resource (`order:12` → a state string)
   * and returns what was there before, atomically, so that two writers never both see a change.
   */
  swapSnapshot(accountId: string, resource: string, state: string): Promise<string | null>;
  /**
   * Undoes a swap whose events could not be queued: puts `previous` back (null: none) if the
   * resource still holds `state`, so that the next look sees the change again. False when a newer
   * state was swapped in meanwhile (its observer reports from there).
   */
  restoreSnapshot(accountId: string, resource: string, state: string, previous: string | null): Promise<boolean>;
  /** The whole snapshot (empty when none was taken). */
  readSnapshot(accountId: string): Promise<Record<string, string>>;
  /** True when `holder` now holds the lease `name` for `ttlMs` (taken or renewed); false while another holds it. */
  holdLease(name: string, holder: string, ttlMs: number): Promise<boolean>;
}

/**
 * What became of one event sent (or to be sent) to an account's endpoint, for the operator: the
 * admin API lists these and replays failed ones from `body`.
 */
export interface DeliveryLogEntry {
  eventId: string;
  type: string;
  /**
   * `pending`: an attempt is due at `nextAttemptAt`; `delivered`: answered 2xx; `failed`: no attempt
   * left (or its secret could not be opened); `dropped`: the endpoint was disabled or removed.
   */
  state: 'pending' | 'delivered' | 'failed' | 'dropped';
  attempts: number;
  /** The receiver's status at the last attempt; null when none answered or none was made. */
  lastStatus: number | null;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  /** When the event was made (its payload's `timestamp`). */
  createdAt: string;
  /** The exact payload, kept to replay it. */
  body: string;
}

/** One event waiting for delivery to an account's endpoint. */
export interface OutboxEntry {
  eventId: string;
  accountId: string;
  /** The exact JSON body to sign and send. */
  body: string;
  /** Attempts already made. */
  attempts: number;
  /**
   * The W3C trace headers every attempt sends (`traceparent`, maybe `tracestate`): the trace of the
   * request that caused the event, or a new one for an event the change detector found.
   */
  trace: Record<string, string>;
}

/** An entry claimed by one consumer; `handle` identifies the claim. */
export interface ClaimedDelivery extends OutboxEntry {
  handle: string;
}

/**
 * Durable, at-least-once delivery queue shared by every instance. A claimed entry stays the
 * claimer's until it is completed or rescheduled; if the claimer stops for longer than the claim
 * idle time (a crash), another consumer claims it again.
 */
export interface WebhookOutbox {
  enqueue(entry: Omit<OutboxEntry, 'attempts'>): Promise<void>;
  /** Up to `max` entries due now: retries whose time has come, new entries, abandoned claims. */
  claim(consumer: string, max: number, claimIdleMs: number): Promise<ClaimedDelivery[]>;
  /** Done with the entry: delivered, dropped, or (failed) given up and kept in the failed list. */
  complete(delivery: ClaimedDelivery, outcome: 'delivered' | 'dropped' | 'failed'): Promise<void>;
  /** Another attempt after `delayMs`, with attempts + 1. */
  reschedule(delivery: ClaimedDelivery, delayMs: number): Promise<void>;
  /** Event ids given up on, newest first (bounded). */
  failed(): Promise<string[]>;
  /** What waits (not yet delivered, dropped or given up), for the metrics. */
  backlog(): Promise<OutboxBacklog>;
}

export interface OutboxBacklog {
  /** Entries waiting: due now, waiting for a retry, or being delivered. */
  depth: number;
  /** How long ago the oldest of them was enqueued, by the store's clock; 0 when none waits. */
  oldestAgeMs: number;
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
