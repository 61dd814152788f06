/**
 * What the gateway's parts report for the metrics, as plain interfaces: the parts depend on these,
 * never on the metrics library (src/ops/metrics.ts implements them). Every label value is from a
 * closed set: no ids, keys or URLs.
 */
import type { RateDecision } from '../stores/types.js';
import type { WebhookDisabledReason } from '../stores/webhook-types.js';

/** The stores, as named in `gateway_store_*` series. */
export type StoreName = 'rate_limits' | 'idempotency' | 'keys' | 'webhooks';

export interface StoreObserver {
  /** A store call failed because the store was unreachable (StoreUnavailableError). */
  storeError(store: StoreName): void;
  /**
   * The request was served without the store: `memory` (per-instance rate limiting) or `stale`
   * (a key record read before the outage).
   */
  storeFallback(store: StoreName, fallback: 'memory' | 'stale'): void;
}

export interface RateLimitObserver extends StoreObserver {
  /**
   * One decision of the rate limiter, every policy it checked; `seconds` from asking the store to
   * its answer (a Redis round trip; the per-instance fallback's included when the store failed).
   */
  decided(decision: RateDecision, seconds: number): void;
}

/**
 * How an idempotent request's claim ended: `new` (first use of the key), `replayed`, `conflict`
 * (other body or endpoint), `in_progress`, `stale` (Profile A, past the replay window), or
 * `outcome_unknown` (an earlier attempt's outcome is unknown: this one reconciles before acting).
 */
export type IdempotencyOutcome = 'new' | 'replayed' | 'conflict' | 'in_progress' | 'stale' | 'outcome_unknown';

export interface IdempotencyObserver extends StoreObserver {
  idempotency(outcome: IdempotencyOutcome): void;
}

/**
 * One webhook delivery attempt: `delivered` (2xx), `retrying` (failed; another attempt is
 * scheduled), `failed` (failed, no attempt left or the endpoint is disabled), `blocked` (not sent:
 * the URL failed the address policy at delivery time), `dropped` (not sent: the endpoint or the
 * account was disabled while the event waited, and events are not kept for later: reference W9).
 */
export type WebhookDeliveryOutcome = 'delivered' | 'retrying' | 'failed' | 'blocked' | 'dropped';

/**
 * Why an event never reached the outbox: more events of writes were held than the bound while the
 * stores refused them (`held_full`, held-events.ts), the process stopped with them still held
 * (`stopped`), or its account had the most events waiting already (`backlog_full`).
 */
export type WebhookLossReason = 'held_full' | 'stopped' | 'backlog_full';

export interface OutboxState {
  /** Deliveries waiting (due now or later). */
  depth: number;
  /** Age of the oldest waiting delivery, 0 when none waits. */
  oldestPendingAgeSeconds: number;
}

export interface WebhookObserver extends StoreObserver {
  recordDelivery(outcome: WebhookDeliveryOutcome): void;
  /** An endpoint was disabled: it answered 410 (`gone`) or failed for too long (`failing`). */
  endpointDisabled(reason: WebhookDisabledReason): void;
  /** An event of a write was lost: the stores refused it for longer than it could be held. */
  eventLost(reason: WebhookLossReason): void;
  /** The outbox reader, called at each scrape (one per app; a later call replaces it). */
  observeOutbox(read: () => OutboxState | Promise<OutboxState>): void;
}
