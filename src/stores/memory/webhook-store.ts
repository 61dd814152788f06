/** Webhook configuration, endpoint status and change-detector snapshots in process memory. */
import { compareText } from '../key-records.js';
import type { DeliveryLogEntry, SealedSecrets, SnapshotEntry, WebhookDeliveryStatus, WebhookDisabledReason, WebhookRecord, WebhookStore } from '../webhook-types.js';

/** One record per account, and accounts are created by operators, so plain maps need no bound. */
export class MemoryWebhookStore implements WebhookStore {
  private readonly records = new Map<string, WebhookRecord>();
  private readonly snapshots = new Map<string, Map<string, SnapshotEntry>>();
  private readonly leases = new Map<string, { holder: string; until: number }>();
  /** Per account, holder → when its delivery slot runs out; emptied as deliveries end. */
  private readonly slots = new Map<string, Map<string, number>>();
  /** Per account, event id → entry; bounded by `keep` at every write. */
  private readonly deliveries = new Map<string, Map<string, DeliveryLogEntry>>();

  constructor(private readonly now: () => number = Date.now) {}

  async get(accountId: string): Promise<WebhookRecord | null> {
    const record = this.records.get(accountId);
    return record ? structuredClone(record) : null;
  }

  async set(accountId: string, record: WebhookRecord, expectedSecret: string | null): Promise<boolean> {
    if ((this.records.get(accountId)?.secret ?? null) !== expectedSecret) return false;
    this.records.set(accountId, structuredClone(record));
    return true;
  }

  async replaceSealedSecrets(accountId: string, expected: SealedSecrets, sealed: SealedSecrets): Promise<boolean> {
    const record = this.records.get(accountId);
    if (record?.secret !== expected.secret || record.previousSecret !== expected.previousSecret) return false;
    record.secret = sealed.secret;
    record.previousSecret = sealed.previousSecret;
    return true;
  }

  async clear(accountId: string): Promise<void> {
    this.records.delete(accountId);
    this.snapshots.delete(accountId);
  }

  async forgetAccount(accountId: string): Promise<void> {
    await this.clear(accountId);
    this.deliveries.delete(accountId);
    this.slots.delete(accountId);
  }

  async recordDelivery(accountId: string, url: string, delivery: WebhookDeliveryStatus, ok: boolean): Promise<WebhookRecord | null> {
    const record = this.records.get(accountId);
    if (record?.url !== url) return null;
    record.lastDelivery = { ...delivery };
    record.failingSince = ok ? null : (record.failingSince ?? delivery.at);
    return structuredClone(record);
  }

  async disable(accountId: string, url: string, reason: WebhookDisabledReason): Promise<void> {
    const record = this.records.get(accountId);
    if (record?.url !== url) return;
    record.status = 'disabled';
    record.disabledReason = reason;
    record.reportFrom = null;
  }

  async enable(accountId: string, reportFrom: string): Promise<WebhookRecord | null> {
    const record = this.records.get(accountId);
    if (!record) return null;
    record.reportFrom = record.status === 'disabled' ? reportFrom : (record.reportFrom ?? reportFrom);
    record.status = 'enabled';
    record.disabledReason = null;
    record.failingSince = null;
    return structuredClone(record);
  }

  async logDelivery(accountId: string, entry: DeliveryLogEntry, keep: number): Promise<void> {
    let log = this.deliveries.get(accountId);
    if (!log) this.deliveries.set(accountId, (log = new Map()));
    log.set(entry.eventId, { ...entry });
    for (const old of newestFirst([...log.values()]).slice(keep)) log.delete(old.eventId);
  }

  async listDeliveries(accountId: string, offset: number, limit: number): Promise<{ entries: DeliveryLogEntry[]; total: number }> {
    const all = newestFirst([...(this.deliveries.get(accountId)?.values() ?? [])]);
    return { entries: structuredClone(all.slice(offset, offset + limit)), total: all.length };
  }

  async getDelivery(accountId: string, eventId: string): Promise<DeliveryLogEntry | null> {
    const entry = this.deliveries.get(accountId)?.get(eventId);
    return entry ? { ...entry } : null;
  }

  async clock(): Promise<number> {
    return this.now();
  }

  async readSnapshotState(accountId: string, resource: string): Promise<SnapshotEntry | null> {
    const entry = this.snapshots.get(accountId)?.get(resource);
    return entry ? { ...entry } : null;
  }

  async recordSnapshot(accountId: string, resource: string, expected: string | null, state: string | null, tag = '', stamp = false): Promise<boolean> {
    let snapshot = this.snapshots.get(accountId);
    if ((snapshot?.get(resource)?.state ?? null) !== expected) return false;
    if (state === null) {
      snapshot?.delete(resource);
      return true;
    }
    if (!snapshot) this.snapshots.set(accountId, (snapshot = new Map()));
    snapshot.set(resource, { state, tag: stamp ? `${this.now().toString(36)}.${tag}` : tag });
    return true;
  }

  async readSnapshot(accountId: string): Promise<Record<string, string>> {
    return Object.fromEntries([...(this.snapshots.get(accountId) ?? [])].map(([resource, entry]) => [resource, entry.state]));
  }

  async takeDeliverySlot(accountId: string, holder: string, limit: number, ttlMs: number): Promise<boolean> {
    const now = this.now();
    let held = this.slots.get(accountId);
    if (!held) this.slots.set(accountId, (held = new Map()));
    for (const [other, until] of held) if (until <= now) held.delete(other);
    if (!held.has(holder) && held.size >= limit) return false;
    held.set(holder, now + ttlMs);
    return true;
  }

  async freeDeliverySlot(accountId: string, holder: string): Promise<void> {
    const held = this.slots.get(accountId);
    held?.delete(holder);
    if (held?.size === 0) this.slots.delete(accountId);
  }

  async holdLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const now = this.now();
    const lease = this.leases.get(name);
    if (lease && lease.holder !== holder && lease.until > now) return false;
    this.leases.set(name, { holder, until: now + ttlMs });
    return true;
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    if (this.leases.get(name)?.holder === holder) this.leases.delete(name);
  }
}

/** Newest first; on the same instant the greater event id first, as Redis's sorted set orders them. */
function newestFirst(entries: DeliveryLogEntry[]): DeliveryLogEntry[] {
  return entries.sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || compareText(b.eventId, a.eventId));
}
