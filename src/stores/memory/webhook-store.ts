/** Webhook configuration, endpoint status and change-detector snapshots in process memory. */
import type { WebhookDeliveryStatus, WebhookRecord, WebhookStore } from '../types.js';

/** One record per account, and accounts are created by operators, so plain maps need no bound. */
export class MemoryWebhookStore implements WebhookStore {
  private readonly records = new Map<string, WebhookRecord>();
  private readonly snapshots = new Map<string, Map<string, string>>();
  private readonly leases = new Map<string, { holder: string; until: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async get(accountId: string): Promise<WebhookRecord | null> {
    const record = this.records.get(accountId);
    return record ? structuredClone(record) : null;
  }

  async set(accountId: string, record: WebhookRecord): Promise<void> {
    this.records.set(accountId, structuredClone(record));
  }

  async clear(accountId: string): Promise<void> {
    this.records.delete(accountId);
    this.snapshots.delete(accountId);
  }

  async recordDelivery(accountId: string, delivery: WebhookDeliveryStatus, ok: boolean): Promise<WebhookRecord | null> {
    const record = this.records.get(accountId);
    if (!record) return null;
    record.lastDelivery = { ...delivery };
    record.failingSince = ok ? null : (record.failingSince ?? delivery.at);
    return structuredClone(record);
  }

  async disable(accountId: string): Promise<void> {
    const record = this.records.get(accountId);
    if (record) record.status = 'disabled';
  }

  async swapSnapshot(accountId: string, resource: string, state: string): Promise<string | null> {
    let snapshot = this.snapshots.get(accountId);
    if (!snapshot) this.snapshots.set(accountId, (snapshot = new Map()));
    const previous = snapshot.get(resource) ?? null;
    snapshot.set(resource, state);
    return previous;
  }

  async readSnapshot(accountId: string): Promise<Record<string, string>> {
    return Object.fromEntries(this.snapshots.get(accountId) ?? []);
  }

  async holdLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const now = this.now();
    const lease = this.leases.get(name);
    if (lease && lease.holder !== holder && lease.until > now) return false;
    this.leases.set(name, { holder, until: now + ttlMs });
    return true;
  }
}
