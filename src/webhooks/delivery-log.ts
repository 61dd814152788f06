/**
 * What became of each event, per account, for the operator (the admin API lists it and replays
 * failed events from it). Written beside the outbox, best effort: the log is a view for people, and
 * failing to write it must never hold up or repeat a delivery (a warning is logged instead).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { DeliveryLogEntry, OutboxEntry, WebhookStore } from '../stores/webhook-types.js';

/** Entries kept per account, newest first. */
export const DELIVERY_LOG_SIZE = 100;

export interface AttemptFacts {
  attempts: number;
  lastStatus: number | null;
  /** Why no answer came (the transport's reason); null when one did. */
  lastError: string | null;
  lastAttemptAt: string;
}

/** The event's type and time, from the payload it was made with (`{ id, api_version, type, timestamp, data }`). */
export function described(body: string): { type: string; createdAt: string } {
  try {
    const { type, timestamp } = JSON.parse(body) as { type?: unknown; timestamp?: unknown };
    if (typeof type === 'string' && typeof timestamp === 'string' && !Number.isNaN(Date.parse(timestamp))) return { type, createdAt: timestamp };
  } catch {
    // Every payload is made by eventBody(); a foreign one is still listed.
  }
  return { type: 'unknown', createdAt: new Date(0).toISOString() };
}

export class DeliveryLog {
  constructor(
    private readonly store: WebhookStore,
    private readonly log: FastifyBaseLogger,
    private readonly now: () => number = Date.now,
  ) {}

  /** A new or replayed event: pending, its first attempt due now. */
  async queued(accountId: string, eventId: string, body: string): Promise<DeliveryLogEntry> {
    const entry: DeliveryLogEntry = {
      eventId,
      ...described(body),
      state: 'pending',
      attempts: 0,
      lastStatus: null,
      lastError: null,
      lastAttemptAt: null,
      nextAttemptAt: new Date(this.now()).toISOString(),
      body,
    };
    await this.write(accountId, entry);
    return entry;
  }

  /** An attempt was made: its facts, and what follows (another attempt at `nextAttemptAt`, or an end). */
  async attempted(delivery: OutboxEntry, facts: AttemptFacts, state: DeliveryLogEntry['state'], nextAttemptAt: string | null): Promise<void> {
    await this.write(delivery.accountId, { eventId: delivery.eventId, ...described(delivery.body), ...facts, state, nextAttemptAt, body: delivery.body });
  }

  /** Ended without an attempt (the endpoint disabled or removed, its secret unreadable); earlier attempts' facts kept unless `error` says why. */
  async ended(delivery: OutboxEntry, state: 'dropped' | 'failed', error?: string): Promise<void> {
    let previous: DeliveryLogEntry | null = null;
    try {
      previous = await this.store.getDelivery(delivery.accountId, delivery.eventId);
    } catch {
      // Written without the earlier facts rather than not at all.
    }
    await this.write(delivery.accountId, {
      eventId: delivery.eventId,
      ...described(delivery.body),
      attempts: delivery.attempts,
      lastStatus: previous?.lastStatus ?? null,
      lastError: error ?? previous?.lastError ?? null,
      lastAttemptAt: previous?.lastAttemptAt ?? null,
      state,
      nextAttemptAt: null,
      body: delivery.body,
    });
  }

  private async write(accountId: string, entry: DeliveryLogEntry): Promise<void> {
    try {
      await this.store.logDelivery(accountId, entry, DELIVERY_LOG_SIZE);
    } catch (error) {
      this.log.warn({ err: (error as Error).message, event_id: entry.eventId, account_id: accountId }, 'webhook delivery log not written');
    }
  }
}
