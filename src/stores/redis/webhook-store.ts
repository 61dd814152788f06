/**
 * Webhook configuration in Redis: one hash per account, `{acct:<id>}:webhook`, and the change
 * detector's snapshot beside it, `{acct:<id>}:webhook-snapshot` (same slot: cleared together).
 * The delivery log is a hash of entries, `{acct:<id>}:webhook-deliveries`, ordered by a sorted set
 * of event ids by creation time, `{acct:<id>}:webhook-delivery-order`; one script writes and trims both.
 * The account's deliveries in flight, across instances, are `{acct:<id>}:webhook-slots`. An account
 * deleted loses all five (forgetAccount).
 */
import { accountTag } from '../rate-policies.js';
import type { DeliveryLogEntry, SealedSecrets, SnapshotEntry, WebhookDeliveryStatus, WebhookDisabledReason, WebhookRecord, WebhookStore } from '../webhook-types.js';
import type { RedisConnection } from './connection.js';
import { holdsFingerprint } from './fingerprint.js';
import { LuaScript } from './lua-script.js';

/** A snapshot field's tag is kept beside it in the same hash, under this prefix (webhook-record-snapshot.lua). */
const TAG_FIELD = 'tag:';

export class RedisWebhookStore implements WebhookStore {
  private readonly scripts = {
    set: LuaScript.load('webhook-set'),
    reseal: LuaScript.load('webhook-reseal'),
    recordDelivery: LuaScript.load('webhook-record-delivery'),
    lease: LuaScript.load('lease-hold'),
    leaseRelease: LuaScript.load('lease-release'),
    enable: LuaScript.load('webhook-enable'),
    disable: LuaScript.load('webhook-disable'),
    logDelivery: LuaScript.load('webhook-log-delivery'),
    recordSnapshot: LuaScript.load('webhook-record-snapshot'),
    clock: LuaScript.load('webhook-clock'),
    takeSlot: LuaScript.load('webhook-slot-take'),
  };

  constructor(private readonly redis: RedisConnection) {}

  async get(accountId: string): Promise<WebhookRecord | null> {
    return parseRecord(await this.redis.run((client) => client.hgetall(this.recordKey(accountId))));
  }

  async set(accountId: string, record: WebhookRecord, expectedSecret: string | null): Promise<boolean> {
    const fields: Record<string, string> = {
      url: record.url,
      secret: record.secret,
      updatedAt: record.updatedAt,
      status: record.status,
    };
    if (record.previousSecret !== null) fields.previousSecret = record.previousSecret;
    if (record.previousSecretExpiresAt !== null) fields.previousSecretExpiresAt = record.previousSecretExpiresAt;
    if (record.lastDelivery !== null) fields.lastDelivery = JSON.stringify(record.lastDelivery);
    if (record.failingSince !== null) fields.failingSince = record.failingSince;
    if (record.disabledReason !== null) fields.disabledReason = record.disabledReason;
    if (record.reportFrom !== null) fields.reportFrom = record.reportFrom;
    const reply = await this.redis.evalScript(this.scripts.set, [this.recordKey(accountId)], [expectedSecret ?? '', ...Object.entries(fields).flat()]);
    return reply === 1;
  }

  async replaceSealedSecrets(accountId: string, expected: SealedSecrets, sealed: SealedSecrets): Promise<boolean> {
    const reply = await this.redis.evalScript(
      this.scripts.reseal,
      [this.recordKey(accountId)],
      [expected.secret, expected.previousSecret ?? '', sealed.secret, sealed.previousSecret ?? ''],
    );
    return reply === 1;
  }

  async clear(accountId: string): Promise<void> {
    await this.redis.run((client) => client.del(this.recordKey(accountId), this.snapshotKey(accountId)));
  }

  async forgetAccount(accountId: string): Promise<void> {
    const keys = [this.recordKey(accountId), this.snapshotKey(accountId), this.deliveriesKey(accountId), this.deliveryOrderKey(accountId), this.slotsKey(accountId)];
    // One hash tag, one slot: a single DEL on a cluster too.
    await this.redis.run((client) => client.del(...keys));
  }

  async recordDelivery(accountId: string, url: string, delivery: WebhookDeliveryStatus, ok: boolean): Promise<WebhookRecord | null> {
    const reply = await this.redis.evalScript(
      this.scripts.recordDelivery,
      [this.recordKey(accountId)],
      [JSON.stringify(delivery), ok ? '1' : '0', delivery.at, url],
    );
    return parseReply(reply);
  }

  async disable(accountId: string, url: string, reason: WebhookDisabledReason): Promise<void> {
    await this.redis.evalScript(this.scripts.disable, [this.recordKey(accountId)], [reason, url]);
  }

  async enable(accountId: string, reportFrom: string): Promise<WebhookRecord | null> {
    return parseReply(await this.redis.evalScript(this.scripts.enable, [this.recordKey(accountId)], [reportFrom]));
  }

  async logDelivery(accountId: string, entry: DeliveryLogEntry, keep: number): Promise<void> {
    await this.redis.evalScript(
      this.scripts.logDelivery,
      [this.deliveriesKey(accountId), this.deliveryOrderKey(accountId)],
      [entry.eventId, JSON.stringify(entry), Date.parse(entry.createdAt), keep],
    );
  }

  async listDeliveries(accountId: string, offset: number, limit: number): Promise<{ entries: DeliveryLogEntry[]; total: number }> {
    const order = this.deliveryOrderKey(accountId);
    const [ids, total] = await this.redis.run((client) =>
      Promise.all([client.zrevrange(order, offset, offset + limit - 1), client.zcard(order)]),
    );
    if (ids.length === 0) return { entries: [], total };
    const values = await this.redis.run((client) => client.hmget(this.deliveriesKey(accountId), ...ids));
    return { entries: values.flatMap((json) => (json === null ? [] : [JSON.parse(json) as DeliveryLogEntry])), total };
  }

  async getDelivery(accountId: string, eventId: string): Promise<DeliveryLogEntry | null> {
    const json = await this.redis.run((client) => client.hget(this.deliveriesKey(accountId), eventId));
    return json === null ? null : (JSON.parse(json) as DeliveryLogEntry);
  }

  async clock(accountId: string): Promise<number> {
    return Number(await this.redis.evalScript(this.scripts.clock, [this.snapshotKey(accountId)], []));
  }

  async readSnapshotState(accountId: string, resource: string): Promise<SnapshotEntry | null> {
    const [state, tag] = await this.redis.run((client) => client.hmget(this.snapshotKey(accountId), resource, `${TAG_FIELD}${resource}`));
    return state === null || state === undefined ? null : { state, tag: tag ?? '' };
  }

  async recordSnapshot(accountId: string, resource: string, expected: string | null, state: string | null, tag = '', stamp = false): Promise<boolean> {
    const reply = await this.redis.evalScript(
      this.scripts.recordSnapshot,
      [this.snapshotKey(accountId)],
      [resource, expected ?? '', expected === null ? '0' : '1', state ?? '', state === null ? '0' : '1', tag, stamp ? '1' : '0'],
    );
    return reply === 1;
  }

  async readSnapshot(accountId: string): Promise<Record<string, string>> {
    const fields = await this.redis.run((client) => client.hgetall(this.snapshotKey(accountId)));
    return Object.fromEntries(Object.entries(fields).filter(([field]) => !field.startsWith(TAG_FIELD)));
  }

  async takeDeliverySlot(accountId: string, holder: string, limit: number, ttlMs: number): Promise<boolean> {
    return (await this.redis.evalScript(this.scripts.takeSlot, [this.slotsKey(accountId)], [holder, limit, Math.ceil(ttlMs)])) === 1;
  }

  async freeDeliverySlot(accountId: string, holder: string): Promise<void> {
    await this.redis.run((client) => client.zrem(this.slotsKey(accountId), holder));
  }

  holdsSealingKey(fingerprint: string, record = true, previous: readonly string[] = []): Promise<boolean | null> {
    return holdsFingerprint(this.redis, '{webhooks}:sealing-key', fingerprint, record, previous);
  }

  async holdLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const reply = await this.redis.evalScript(this.scripts.lease, [this.redis.key(`lease:${name}`)], [holder, Math.ceil(ttlMs)]);
    return reply === 1;
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await this.redis.evalScript(this.scripts.leaseRelease, [this.redis.key(`lease:${name}`)], [holder]);
  }

  private recordKey(accountId: string): string {
    return this.redis.key(`${accountTag(accountId)}:webhook`);
  }

  private slotsKey(accountId: string): string {
    return this.redis.key(`${accountTag(accountId)}:webhook-slots`);
  }

  private snapshotKey(accountId: string): string {
    return this.redis.key(`${accountTag(accountId)}:webhook-snapshot`);
  }

  private deliveriesKey(accountId: string): string {
    return this.redis.key(`${accountTag(accountId)}:webhook-deliveries`);
  }

  private deliveryOrderKey(accountId: string): string {
    return this.redis.key(`${accountTag(accountId)}:webhook-delivery-order`);
  }
}

/** A script's HGETALL reply (a flat field/value array), or nil. */
function parseReply(reply: unknown): WebhookRecord | null {
  if (!Array.isArray(reply)) return null;
  const fields: Record<string, string> = {};
  for (let index = 0; index + 1 < reply.length; index += 2) fields[String(reply[index])] = String(reply[index + 1]);
  return parseRecord(fields);
}

function parseRecord(fields: Record<string, string>): WebhookRecord | null {
  const { url, secret, updatedAt } = fields;
  if (url === undefined || secret === undefined || updatedAt === undefined) return null;
  return {
    url,
    secret,
    updatedAt,
    previousSecret: fields.previousSecret ?? null,
    previousSecretExpiresAt: fields.previousSecretExpiresAt ?? null,
    status: fields.status === 'disabled' ? 'disabled' : 'enabled',
    // Records disabled before reasons were kept have none.
    disabledReason: fields.status === 'disabled' && (fields.disabledReason === 'gone' || fields.disabledReason === 'failing') ? fields.disabledReason : null,
    lastDelivery: fields.lastDelivery ? (JSON.parse(fields.lastDelivery) as WebhookDeliveryStatus) : null,
    failingSince: fields.failingSince ?? null,
    // Absent on records the previous release wrote (its PUT replaces the hash without it).
    reportFrom: fields.reportFrom ?? null,
  };
}
