/** The webhook outbox in process memory (sandbox, one instance): same claim and admission rules as Redis. */
import { randomUUID } from 'node:crypto';
import { EVENT_NUMBER_KEPT_MS, numberedBody } from '../event-sequence.js';
import { MAX_WAITING_PER_ACCOUNT, type ClaimedDelivery, type EnqueueResult, type NewOutboxEntry, type OutboxAdmission, type OutboxBacklog, type OutboxEntry, type WebhookOutbox } from '../webhook-types.js';

const MAX_FAILED = 1_000;

interface Slot {
  entry: OutboxEntry;
  /** When it may be claimed (retries wait). */
  dueAt: number;
  claim: { handle: string; consumer: string; at: number } | null;
  enqueuedAt: number;
  /** Its place in its account's line, should it be parked. */
  seq: number;
}

export class MemoryWebhookOutbox implements WebhookOutbox {
  /** Admitted entries in enqueue order; a rescheduled entry moves to the end. */
  private readonly slots: Slot[] = [];
  /** Retries waiting for their time: not admitted, not counted against their account's share. */
  private readonly retries: Slot[] = [];
  /** Per account: the entries waiting to be admitted, in order. */
  private readonly parked = new Map<string, Slot[]>();
  /** Event ids of every entry not yet done (admitted, retrying or parked). */
  private readonly waiting = new Set<string>();
  private readonly failedIds: string[] = [];
  private nextSeq = 0;
  /** Per account: the last sequence number an event took (its body's `sequence`). */
  private readonly eventNumbers = new Map<string, number>();
  /** Per event id: the number it took, and until when it is kept (in that order: oldest first). */
  private readonly numberOfEvent = new Map<string, { number: number; until: number }>();

  private readonly perAccount: number;
  private readonly maxWaiting: number;

  /** `admission`: an account's admitted entries at most (its delivery share), and its parked ones at most. */
  constructor(
    private readonly now: () => number = Date.now,
    admission: Partial<OutboxAdmission> = {},
  ) {
    this.perAccount = admission.perAccount ?? 2;
    this.maxWaiting = admission.maxWaiting ?? MAX_WAITING_PER_ACCOUNT;
  }

  async enqueue({ numbered = false, ...entry }: NewOutboxEntry): Promise<EnqueueResult> {
    if (this.waiting.has(entry.eventId)) return { outcome: 'already_waiting' };
    const body = numbered ? numberedBody(entry.body, this.eventNumber(entry.accountId, entry.eventId)) : entry.body;
    const line = this.parked.get(entry.accountId);
    const parks = line !== undefined || this.admittedOf(entry.accountId) >= this.perAccount;
    if (parks && (line?.length ?? 0) >= this.maxWaiting) return { outcome: 'full', body };
    this.waiting.add(entry.eventId);
    const now = this.now();
    const slot: Slot = { entry: { ...entry, body, attempts: 0 }, dueAt: now, claim: null, enqueuedAt: now, seq: this.nextSeq++ };
    if (parks) this.parkSlot(slot);
    else this.slots.push(slot);
    return { outcome: 'queued', body };
  }

  async claim(consumer: string, max: number, claimIdleMs: number): Promise<ClaimedDelivery[]> {
    const now = this.now();
    for (const retry of this.retries.filter((slot) => slot.dueAt <= now)) {
      this.retries.splice(this.retries.indexOf(retry), 1);
      this.slots.push({ ...retry, seq: this.nextSeq++ });
    }
    const claimed: ClaimedDelivery[] = [];
    for (const slot of this.slots) {
      if (claimed.length >= max) break;
      const free = slot.claim === null || now - slot.claim.at >= claimIdleMs;
      if (!free) continue;
      slot.claim = { handle: randomUUID(), consumer, at: now };
      claimed.push({ ...slot.entry, handle: slot.claim.handle });
    }
    return claimed;
  }

  async complete(delivery: ClaimedDelivery, outcome: 'delivered' | 'dropped' | 'failed'): Promise<void> {
    const slot = this.take(delivery);
    if (!slot) return;
    this.waiting.delete(delivery.eventId);
    if (outcome === 'failed') {
      this.failedIds.unshift(delivery.eventId);
      this.failedIds.length = Math.min(this.failedIds.length, MAX_FAILED);
    }
    this.admit(delivery.accountId);
  }

  async reschedule(delivery: ClaimedDelivery, delayMs: number): Promise<void> {
    const slot = this.take(delivery);
    if (!slot) return;
    this.retries.push({ ...slot, entry: { ...slot.entry, attempts: slot.entry.attempts + 1 }, dueAt: this.now() + delayMs, claim: null });
    this.admit(delivery.accountId);
  }

  async park(delivery: ClaimedDelivery): Promise<void> {
    const slot = this.take(delivery);
    if (!slot) return;
    this.parkSlot({ ...slot, claim: null });
    // None of the account's entries left admitted: no delivery's end would admit it (the slot that
    // refused it was one just ending), so its line's head goes back now.
    if (this.admittedOf(delivery.accountId) === 0) this.admit(delivery.accountId);
  }

  /** The event's number: the one it took before (webhook-enqueue.lua says why), else the account's next, from 1. */
  private eventNumber(accountId: string, eventId: string): number {
    const now = this.now();
    for (const [id, { until }] of this.numberOfEvent) {
      if (until > now) break;
      this.numberOfEvent.delete(id);
    }
    let number = this.numberOfEvent.get(eventId)?.number;
    if (number === undefined) {
      number = (this.eventNumbers.get(accountId) ?? 0) + 1;
      this.eventNumbers.set(accountId, number);
    }
    // Moved to the end: the map stays in order of expiry.
    this.numberOfEvent.delete(eventId);
    this.numberOfEvent.set(eventId, { number, until: now + EVENT_NUMBER_KEPT_MS });
    return number;
  }

  async forgetAccount(accountId: string): Promise<void> {
    this.eventNumbers.delete(accountId);
  }

  async failed(): Promise<string[]> {
    return [...this.failedIds];
  }

  async backlog(): Promise<OutboxBacklog> {
    let oldest = Infinity;
    for (const slot of [...this.slots, ...this.retries]) oldest = Math.min(oldest, slot.enqueuedAt);
    for (const line of this.parked.values()) oldest = Math.min(oldest, line[0]?.enqueuedAt ?? Infinity);
    const depth = this.waiting.size;
    return { depth, oldestAgeMs: depth === 0 ? 0 : Math.max(0, this.now() - oldest) };
  }

  /** Into its account's line at its own place (a parked entry goes back before later ones). */
  private parkSlot(slot: Slot): void {
    const line = this.parked.get(slot.entry.accountId) ?? [];
    const at = line.findIndex((other) => other.seq > slot.seq);
    line.splice(at < 0 ? line.length : at, 0, slot);
    this.parked.set(slot.entry.accountId, line);
  }

  /** The account's next parked entries, up to its share. */
  private admit(accountId: string): void {
    const line = this.parked.get(accountId);
    while (line && line.length > 0 && this.admittedOf(accountId) < this.perAccount) this.slots.push(line.shift() as Slot);
    if (line?.length === 0) this.parked.delete(accountId);
  }

  private admittedOf(accountId: string): number {
    return this.slots.reduce((count, slot) => count + (slot.entry.accountId === accountId ? 1 : 0), 0);
  }

  /** Only the current claim counts: a consumer whose claim was taken over cannot act on the entry. */
  private take(delivery: ClaimedDelivery): Slot | undefined {
    const index = this.slots.findIndex((slot) => slot.claim?.handle === delivery.handle);
    return index < 0 ? undefined : this.slots.splice(index, 1)[0];
  }
}
