/** Webhook configuration in Redis: one hash per account, `{acct:<id>}:webhook`. */
import { accountTag } from '../rate-policies.js';
import type { WebhookRecord, WebhookStore } from '../types.js';
import type { RedisConnection } from './connection.js';

export class RedisWebhookStore implements WebhookStore {
  constructor(private readonly redis: RedisConnection) {}

  async get(accountId: string): Promise<WebhookRecord | null> {
    const fields = await this.redis.run((client) => client.hgetall(this.recordKey(accountId)));
    const { url, secret, updatedAt } = fields;
    return url === undefined || secret === undefined || updatedAt === undefined ? null : { url, secret, updatedAt };
  }

  async set(accountId: string, record: WebhookRecord): Promise<void> {
    const { url, secret, updatedAt } = record;
    await this.redis.run((client) => client.hset(this.recordKey(accountId), { url, secret, updatedAt }));
  }

  async clear(accountId: string): Promise<void> {
    await this.redis.run((client) => client.del(this.recordKey(accountId)));
  }

  private recordKey(accountId: string): string {
    return this.redis.key(`${accountTag(accountId)}:webhook`);
  }
}
