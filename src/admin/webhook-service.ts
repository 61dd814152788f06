/**
 * The operator's view of an account's webhooks: its endpoint, its recent deliveries, replaying a
 * failed event and enabling a disabled endpoint. Beside the account and key operations (service.ts),
 * for the admin API.
 */
import { isDisabled } from '../keys/key-service.js';
import { Refusal } from '../keys/refusal.js';
import type { DeliveryLogEntry, WebhookRecord, WebhookStore } from '../stores/webhook-types.js';
import type { WebhookEvents } from '../webhooks/emitter.js';
import type { AdminService } from './service.js';

export class WebhookAdmin {
  constructor(
    private readonly accounts: AdminService,
    private readonly store: WebhookStore,
    /** Replays go through it, so the local delivery worker wakes at once. */
    private readonly events: Pick<WebhookEvents, 'replay' | 'rebaseline'>,
  ) {}

  /** The account's endpoint (URL, status, last delivery); refused when the account or the endpoint is unknown. */
  async webhook(accountId: string): Promise<WebhookRecord> {
    await this.accounts.account(accountId);
    const record = await this.store.get(accountId);
    if (!record) throw new Refusal('unknown', `account ${accountId} has no webhook endpoint`);
    return record;
  }

  /** A page of the account's delivery log, newest first. */
  async deliveries(accountId: string, offset: number, limit: number): Promise<{ entries: DeliveryLogEntry[]; total: number }> {
    await this.accounts.account(accountId);
    return this.store.listDeliveries(accountId, offset, limit);
  }

  /**
   * Sends a failed (or dropped) event again, with the same id and payload and a fresh retry
   * schedule. The endpoint must be there and enabled: enable it first. The account must be enabled
   * too: the worker drops a disabled account's events unsent, so a replay would be answered
   * "pending" and never sent.
   */
  async replayDelivery(accountId: string, eventId: string): Promise<DeliveryLogEntry> {
    const account = await this.accounts.account(accountId);
    const record = await this.webhook(accountId);
    const entry = await this.store.getDelivery(accountId, eventId);
    if (!entry) throw new Refusal('unknown', `account ${accountId} has no logged event ${eventId}`);
    if (entry.state !== 'failed' && entry.state !== 'dropped') {
      throw new Refusal('webhook_state', `event ${eventId} is ${entry.state}; only a failed or dropped event can be replayed`);
    }
    if (isDisabled(account)) {
      throw new Refusal('account_disabled', `account ${accountId} is disabled and its events are dropped unsent; enable it first`);
    }
    if (record.status === 'disabled') {
      throw new Refusal('webhook_state', `the webhook endpoint of account ${accountId} is disabled; enable it first`);
    }
    const replayed = await this.events.replay(accountId, entry);
    if (!replayed) {
      throw new Refusal('webhook_state', `account ${accountId} has the most events waiting for its endpoint already (webhooks.maxWaitingPerAccount); replay once they are sent`);
    }
    return replayed;
  }

  /** Enables a disabled endpoint (its URL and secret kept); its failing run starts afresh. */
  async enableWebhook(accountId: string): Promise<WebhookRecord> {
    // Changes made while it was disabled are not reported once it is enabled (see rebaseline).
    if ((await this.webhook(accountId)).status === 'disabled') await this.events.rebaseline(accountId);
    // By the store's clock, as the snapshot stamps it is compared with.
    const enabled = await this.store.enable(accountId, new Date(await this.store.clock(accountId)).toISOString());
    if (!enabled) throw new Refusal('unknown', `account ${accountId} has no webhook endpoint`);
    return enabled;
  }
}
