/**
 * Events of writes that the stores refused to queue (Redis dropped out between the write and its
 * event): held in this instance's memory, in order, and queued again until the stores take them,
 * each with its own id and payload, so a receiver that somehow gets one twice can tell. A write's
 * event has no other source: the change detector reports status changes, never
 * `service.action.succeeded` or `webhook.test`. Bounded; what the bound or a stop leaves unqueued is
 * logged, event by event (there is no disk to keep it on).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { WebhookLossReason } from '../ops/observers.js';
import type { OutboxEntry } from '../stores/webhook-types.js';
import { described } from './delivery-log.js';

export type HeldEntry = Omit<OutboxEntry, 'attempts'>;

export interface HeldEventsOptions {
  /** Queues an entry (throws while the stores refuse it). */
  queue: (entry: HeldEntry) => Promise<unknown>;
  log: FastifyBaseLogger;
  /** Events held at most; more are logged as lost. */
  most?: number;
  /** Hears each event lost (the log line says which; the operator's metric counts them). */
  onLost?: ((reason: WebhookLossReason) => void) | undefined;
  /** The first retry's delay; each failed pass doubles it, up to `longestRetryMs`. */
  firstRetryMs?: number;
  longestRetryMs?: number;
}

export class HeldEvents {
  private readonly held: HeldEntry[] = [];
  private readonly most: number;
  private readonly firstRetryMs: number;
  private readonly longestRetryMs: number;
  private delayMs: number;
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: HeldEventsOptions) {
    this.most = options.most ?? 10_000;
    this.firstRetryMs = options.firstRetryMs ?? 1_000;
    this.longestRetryMs = options.longestRetryMs ?? 30_000;
    this.delayMs = this.firstRetryMs;
  }

  get size(): number {
    return this.held.length;
  }

  /** An entry the stores refused: held, and queued again later. */
  hold(entry: HeldEntry, error: unknown): void {
    if (!this.accept(entry, error)) return;
    this.options.log.warn({ err: error, account_id: entry.accountId, event_id: entry.eventId }, 'webhook event held: the stores did not take it; queued again when they do');
    this.schedule();
  }

  /** A new entry while others are held: it goes behind them (events stay in order), and a pass runs now. */
  queueBehind(entry: HeldEntry): void {
    if (!this.accept(entry, undefined)) return;
    this.delayMs = 0;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.schedule();
  }

  private accept(entry: HeldEntry, error: unknown): boolean {
    if (this.closed || this.held.length >= this.most) {
      if (this.closed) this.lost(entry, error, 'stopping', 'stopped');
      else this.lost(entry, error, `${this.most} events already held`, 'held_full');
      return false;
    }
    this.held.push(entry);
    return true;
  }

  /** Stops retrying after one last pass; what is still held is logged as lost. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.pass;
    if (this.held.length > 0) await this.retry();
    for (const entry of this.held.splice(0)) this.lost(entry, undefined, 'stopped with the stores still refusing it', 'stopped');
  }

  private schedule(): void {
    if (this.timer || this.pass || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pass = this.retry().finally(() => {
        this.pass = undefined;
        if (this.held.length > 0) this.schedule();
      });
    }, this.delayMs);
    // Held events never keep the process up; close() makes the last attempt.
    this.timer.unref();
  }

  /** Queues what is held, oldest first, until the stores refuse one (they are still down). */
  private async retry(): Promise<void> {
    while (this.held.length > 0) {
      const entry = this.held[0] as HeldEntry;
      try {
        await this.options.queue(entry);
      } catch {
        this.delayMs = Math.min(Math.max(this.delayMs * 2, this.firstRetryMs), this.longestRetryMs);
        return;
      }
      this.held.shift();
      this.delayMs = this.firstRetryMs;
    }
  }

  private lost(entry: HeldEntry, error: unknown, why: string, reason: WebhookLossReason): void {
    this.options.onLost?.(reason);
    this.options.log.error(
      { err: error, account_id: entry.accountId, event_id: entry.eventId, event_type: described(entry.body).type },
      `webhook event lost: ${why}`,
    );
  }
}
