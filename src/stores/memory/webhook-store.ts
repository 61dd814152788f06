/** Webhook configuration in process memory: one record per account. */
import type { WebhookRecord, WebhookStore } from '../types.js';

/** One record per account, and accounts are created by operators, so a plain map needs no bound. */
export class MemoryWebhookStore implements WebhookStore {
  private readonly records = new Map<string, WebhookRecord>();

  async get(accountId: string): Promise<WebhookRecord | null> {
    const record = this.records.get(accountId);
    return record ? { ...record } : null;
  }

  async set(accountId: string, record: WebhookRecord): Promise<void> {
    this.records.set(accountId, { ...record });
  }

  async clear(accountId: string): Promise<void> {
    this.records.delete(accountId);
  }
}
