/**
 * The webhook stores' interfaces (contract §6): the endpoint's record and delivery log, the change
 * detector's snapshot, and the delivery outbox. Each has a memory and a Redis implementation that
 * pass one shared conformance suite (test/stores/webhook-conformance.ts).
 */
export interface WebhookDeliveryStatus {
  /** When the attempt ended. */
  at: string;
  /** The receiver's HTTP status; null when it did not answer (refused, unreachable, timed out). */
  httpStatus: number | null;
  /** Attempts made for that event so far. */
  attempts: number;
}

/** Why an endpoint was disabled: it answered `410 Gone`, or every delivery failed for `disableAfterMs`. */
export type WebhookDisabledReason = 'gone' | 'failing';

export interface WebhookRecord {
  url: string;
  /** Signing secret, sealed (src/webhooks/secret-box.ts); shown to the client once. */
  secret: string;
  /** After a rotation, the previous secret (sealed) signs too until `previousSecretExpiresAt`. */
  previousSecret: string | null;
  previousSecretExpiresAt: string | null;
  updatedAt: string;
  status: 'enabled' | 'disabled';
  /** Set with `status: 'disabled'`; null while enabled. */
  disabledReason: WebhookDisabledReason | null;
  lastDelivery: WebhookDeliveryStatus | null;
  /** Start of the current run of failed attempts; null after a success. */
  failingSince: string | null;
  /**
   * Since when changes are news to the endpoint: when it was set anew or enabled again (the change
   * detector's baseline reports what writes recorded since). Null while disabled, and on records of
   * the previous release, whose baseline reports nothing.
   */
  reportFrom: string | null;
}

/** An endpoint's signing secrets as stored, sealed. */
export type SealedSecrets = Pick<WebhookRecord, 'secret' | 'previousSecret'>;

export interface WebhookStore {
  get(accountId: string): Promise<WebhookRecord | null>;
  /**
   * Replaces the record, only if the stored one still has the sealed secret `expectedSecret` (null:
   * no record), as the caller read it; false when another write came in between. Two PUTs at once
   * must not both hand out a new secret while only one is kept.
   */
  set(accountId: string, record: WebhookRecord, expectedSecret: string | null): Promise<boolean>;
  /**
   * Writes the endpoint's secrets sealed anew (an encryption key's rotation) in place of the ones
   * the caller read, `expected`, only while those are still stored; nothing else in the record
   * changes. False when another write came in between or no record is stored.
   */
  replaceSealedSecrets(accountId: string, expected: SealedSecrets, sealed: SealedSecrets): Promise<boolean>;
  /** Removes the record and the change detector's snapshot. */
  clear(accountId: string): Promise<void>;
  /**
   * The account is deleted: its record (with its secrets), snapshot, delivery log and delivery
   * slots removed. Its id is never an account's again, so nothing of it is worth keeping.
   */
  forgetAccount(accountId: string): Promise<void>;
  /**
   * Records an attempt made to `url` on the endpoint: last_delivery, and failing_since set by the
   * first failure of a run and cleared by a success. Does nothing (null) when no URL is set or
   * another one was set while the attempt was in flight: an old URL's answer says nothing about the
   * new one. Returns the record after.
   */
  recordDelivery(accountId: string, url: string, delivery: WebhookDeliveryStatus, ok: boolean): Promise<WebhookRecord | null>;
  /**
   * Disables the endpoint at `url` (410, or failing too long), records why and clears `reportFrom`;
   * setting a URL again enables it. Does nothing when no URL or another one is set.
   */
  disable(accountId: string, url: string, reason: WebhookDisabledReason): Promise<void>;
  /**
   * Enables a disabled endpoint again (its reason cleared) and ends its run of failures (failing_since cleared), keeping
   * its URL and secrets; changes are news to it from `reportFrom` (an enabled endpoint keeps its own time, if it has
   * one). Does nothing when no URL is set. Returns the record after.
   */
  enable(accountId: string, reportFrom: string): Promise<WebhookRecord | null>;
  /**
   * The account's delivery log: adds the event's entry or replaces it (same event id), keeping
   * the newest `keep` entries (by `createdAt`) and dropping older ones.
   */
  logDelivery(accountId: string, entry: DeliveryLogEntry, keep: number): Promise<void>;
  /** A page of the delivery log, newest first, and how many entries it holds. */
  listDeliveries(accountId: string, offset: number, limit: number): Promise<{ entries: DeliveryLogEntry[]; total: number }>;
  getDelivery(accountId: string, eventId: string): Promise<DeliveryLogEntry | null>;
  /**
   * The store's clock (ms since the epoch) as the account's snapshot sees it: snapshot stamps, the
   * detector's read times and endpoints' `reportFrom` all come from it, one clock for every
   * instance (Redis: TIME on the node holding the account's keys; memory: the process's clock).
   */
  clock(accountId: string): Promise<number>;
  /** What the change detector's snapshot holds for one resource (`order:12` → its state and tag; null: nothing yet). */
  readSnapshotState(accountId: string, resource: string): Promise<SnapshotEntry | null>;
  /**
   * Records `state` for one resource only if it still holds the state `expected` (null: nothing),
   * atomically: an observer records what it reported after queueing its events, and a newer state
   * recorded meanwhile by another observer is never overwritten with an older one. `tag` is stored
   * with it ('' stores none); `stamp`: after the store's clock as it records (`clock`), ms in base
   * 36 and a '.' (`<time>.<tag>`, which snapshotTagTime reads). `state` null forgets the resource
   * (deleted upstream), on the same condition. False when not recorded.
   */
  recordSnapshot(accountId: string, resource: string, expected: string | null, state: string | null, tag?: string, stamp?: boolean): Promise<boolean>;
  /** The whole snapshot's states (empty when none was taken). */
  readSnapshot(accountId: string): Promise<Record<string, string>>;
  /** True when `holder` now holds the lease `name` for `ttlMs` (taken or renewed); false while another holds it. */
  holdLease(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Gives up the lease `name` if `holder` holds it (a clean stop: another takes it at once, not when it runs out). */
  releaseLease(name: string, holder: string): Promise<void>;
  /**
   * Takes one of the account's `limit` delivery slots for `holder` (a delivery in flight), shared
   * by every instance, for `ttlMs`: a holder that dies frees its slot when that runs out. False
   * while all are held.
   */
  takeDeliverySlot(accountId: string, holder: string, limit: number, ttlMs: number): Promise<boolean>;
  /** Frees the holder's slot; nothing when it holds none. */
  freeDeliverySlot(accountId: string, holder: string): Promise<void>;
  /**
   * A store shared by separately configured processes (Redis) keeps a fingerprint of the key the
   * secrets are sealed with: true when `fingerprint` is that one. None stored yet: recorded when
   * `record` (the default), else null (secrets of the previous release, which recorded none, may be
   * sealed with another). One of `previous` stored (webhooks.previousEncryptionKeys'): `fingerprint`
   * takes its place, and true. Absent where one process's config is the only one (the memory stores).
   */
  holdsSealingKey?(fingerprint: string, record?: boolean, previous?: readonly string[]): Promise<boolean | null>;
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
  /**
   * Why the last attempt got no answer (blocked by the URL policy, refused, timed out, TLS), as the
   * worker logs it; null when it was answered or none was made. Absent in entries from before.
   */
  lastError?: string | null;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  /** When the event was made (its payload's `timestamp`). */
  createdAt: string;
  /** The exact payload, kept to replay it. */
  body: string;
}

/**
 * One resource's entry in the change detector's snapshot: its last reported state, and the tag
 * written with it (random, new at every record; '' when none was), from which the events of the
 * next change take their ids: two observers of one change, or a pass repeated after a crash, give
 * its events the same ids.
 */
export interface SnapshotEntry {
  state: string;
  tag: string;
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
 * idle time (a crash), another consumer claims it again. An account has at most its delivery share
 * claimable at once (retries that came due aside); its other entries, `maxWaiting` at most, wait in
 * order and are admitted as its deliveries end, so a claim reaches every account's next event,
 * however many one has queued.
 */
export interface WebhookOutbox {
  /**
   * Adds the entry (`queued`). Nothing is added while an entry with its event id still waits
   * (`already_waiting`), or when it would wait beyond its account's share and its account already has
   * `maxWaiting` entries waiting (`full`): a receiver that hangs or crawls for days must not fill the store.
   */
  enqueue(entry: NewOutboxEntry): Promise<EnqueueResult>;
  /** Up to `max` entries due now: retries whose time has come, new entries, abandoned claims. */
  claim(consumer: string, max: number, claimIdleMs: number): Promise<ClaimedDelivery[]>;
  /** Done with the entry: delivered, dropped, or (failed) given up and kept in the failed list. */
  complete(delivery: ClaimedDelivery, outcome: 'delivered' | 'dropped' | 'failed'): Promise<void>;
  /** Another attempt after `delayMs`, with attempts + 1. */
  reschedule(delivery: ClaimedDelivery, delayMs: number): Promise<void>;
  /**
   * Puts a claimed entry whose account has its share of deliveries in flight back in that
   * account's line, at its own place, unattempted and no longer this consumer's: it comes back as
   * one of the account's deliveries ends (complete or reschedule), never by being read again.
   */
  park(delivery: ClaimedDelivery): Promise<void>;
  /** Event ids given up on, newest first (bounded). */
  failed(): Promise<string[]>;
  /** What waits (not yet delivered, dropped or given up), for the metrics. */
  backlog(): Promise<OutboxBacklog>;
  /**
   * The account is deleted: its event counter (its last `sequence`) removed. Its entries still
   * waiting are left to the worker, which drops them as each comes due.
   */
  forgetAccount(accountId: string): Promise<void>;
}

/** An event to enqueue. */
export interface NewOutboxEntry extends Omit<OutboxEntry, 'attempts'> {
  /**
   * The body (a JSON object) gets its account's next sequence number as `sequence`, in the same
   * step as the enqueue: a number per event queued or refused as `full` (the receiver sees the
   * gap), none for one `already_waiting`. A replay is not numbered: it keeps its logged body.
   */
  numbered?: boolean;
}

/** `body`: the event's body as stored (and logged), numbered when asked. */
export type EnqueueResult = { outcome: 'queued' | 'full'; body: string } | { outcome: 'already_waiting' };

/** The default of webhooks.maxWaitingPerAccount. */
export const MAX_WAITING_PER_ACCOUNT = 10_000;

/**
 * `perAccount`: an account's entries up for delivery at once (webhooks.perAccountConcurrency);
 * `maxWaiting`: its entries waiting behind those at most (webhooks.maxWaitingPerAccount).
 */
export interface OutboxAdmission {
  perAccount: number;
  maxWaiting: number;
}

export interface OutboxBacklog {
  /** Entries waiting: due now, waiting for a retry, or being delivered. */
  depth: number;
  /** How long ago the oldest of them was enqueued, by the store's clock; 0 when none waits. */
  oldestAgeMs: number;
}
