/** The webhook outbox in process memory (sandbox, one instance): same claim rules as Redis. */
import { randomUUID } from 'node:crypto';
import type { ClaimedDelivery, OutboxBacklog, OutboxEntry, WebhookOutbox } from '../webhook-types.js';

const MAX_FAILED = 1_000;

interface Slot {
  entry: OutboxEntry;
  /** When it may be claimed (retries wait). */
  dueAt: number;
  claim: { handle: string; consumer: string; at: number } | null;
  enqueuedAt: number;
}

export class MemoryWebhookOutbox implements WebhookOutbox {
  /** In enqueue order; a rescheduled entry moves to the end. */
  private readonly slots: Slot[] = [];
  private readonly failedIds: string[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  async enqueue(entry: Omit<OutboxEntry, 'attempts'>): Promise<boolean> {
    if (this.slots.some((slot) => slot.entry.eventId === entry.eventId)) return false;
    const now = this.now();
    this.slots.push({ entry: { ...entry, attempts: 0 }, dueAt: now, claim: null, enqueuedAt: now });
    return true;
  }

  async claim(consumer: string, max: number, claimIdleMs: number): Promise<ClaimedDelivery[]> {
    const now = this.now();
    const claimed: ClaimedDelivery[] = [];
    for (const slot of this.slots) {
      if (claimed.length >= max) break;
      const free = slot.claim === null ? slot.dueAt <= now : now - slot.claim.at >= claimIdleMs;
      if (!free) continue;
      slot.claim = { handle: randomUUID(), consumer, at: now };
      claimed.push({ ...slot.entry, handle: slot.claim.handle });
    }
    return claimed;
  }

  async complete(delivery: ClaimedDelivery, outcome: 'delivered' | 'dropped' | 'failed'): Promise<void> {
    const index = this.indexOf(delivery);
    if (index < 0) return;
    this.slots.splice(index, 1);
    if (outcome === 'failed') {
      this.failedIds.unshift(delivery.eventId);
      this.failedIds.length = Math.min(this.failedIds.length, MAX_FAILED);
    }
  }

  async reschedule(delivery: ClaimedDelivery, delayMs: number): Promise<void> {
    this.putBack(delivery, delayMs, 1);
  }

  async release(delivery: ClaimedDelivery, delayMs: number): Promise<void> {
    this.putBack(delivery, delayMs, 0);
  }

  async failed(): Promise<string[]> {
    return [...this.failedIds];
  }

  async backlog(): Promise<OutboxBacklog> {
    const oldest = this.slots.reduce((min, slot) => Math.min(min, slot.enqueuedAt), Infinity);
    return { depth: this.slots.length, oldestAgeMs: this.slots.length === 0 ? 0 : Math.max(0, this.now() - oldest) };
  }

  /** Unclaimed, due after `delayMs`, at the end (as Redis appends a due retry to its stream). */
  private putBack(delivery: ClaimedDelivery, delayMs: number, attempted: number): void {
    const index = this.indexOf(delivery);
    if (index < 0) return;
    const [slot] = this.slots.splice(index, 1) as [Slot];
    this.slots.push({ ...slot, entry: { ...slot.entry, attempts: slot.entry.attempts + attempted }, dueAt: this.now() + delayMs, claim: null });
  }

  /** Only the current claim counts: a consumer whose claim was taken over cannot act on the entry. */
  private indexOf(delivery: ClaimedDelivery): number {
    return this.slots.findIndex((slot) => slot.claim?.handle === delivery.handle);
  }
}
