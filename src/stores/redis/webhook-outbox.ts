/**
 * The webhook outbox in Redis: a stream read through one consumer group (any instance delivers),
 * retries waiting in a sorted set until due, given-up event ids in a capped list, and the events
 * not yet done in a pending set by enqueue time (the backlog the metrics show). The keys share one
 * hash tag so the scripts that move entries between them run on one cluster node.
 */
import type { ClaimedDelivery, OutboxBacklog, OutboxEntry, WebhookOutbox } from '../webhook-types.js';
import type { RedisConnection } from './connection.js';
import { LuaScript } from './lua-script.js';

const GROUP = 'deliverers';
const MAX_FAILED = 1_000;

type StreamEntry = [id: string, fields: string[] | null];

export class RedisWebhookOutbox implements WebhookOutbox {
  private readonly scripts = {
    enqueue: LuaScript.load('webhook-enqueue'),
    promote: LuaScript.load('webhook-promote'),
    reschedule: LuaScript.load('webhook-reschedule'),
    complete: LuaScript.load('webhook-complete'),
    backlog: LuaScript.load('webhook-backlog'),
  };
  private readonly keys: { stream: string; retry: string; failed: string; pending: string };
  private groupReady = false;

  constructor(private readonly redis: RedisConnection) {
    this.keys = {
      stream: redis.key('{webhooks}:outbox'),
      retry: redis.key('{webhooks}:retry'),
      failed: redis.key('{webhooks}:failed'),
      pending: redis.key('{webhooks}:pending'),
    };
  }

  async enqueue(entry: Omit<OutboxEntry, 'attempts'>): Promise<boolean> {
    const value = JSON.stringify({ ...entry, attempts: 0 });
    return (await this.redis.evalScript(this.scripts.enqueue, [this.keys.stream, this.keys.pending], [entry.eventId, value])) === 1;
  }

  async claim(consumer: string, max: number, claimIdleMs: number): Promise<ClaimedDelivery[]> {
    try {
      return await this.claimFromGroup(consumer, max, claimIdleMs);
    } catch (error) {
      if (!(error instanceof Error && error.message.startsWith('NOGROUP'))) throw error;
      // The group is gone with the stream (Redis restarted empty, a flush): made again, and one retry.
      this.groupReady = false;
      return this.claimFromGroup(consumer, max, claimIdleMs);
    }
  }

  private async claimFromGroup(consumer: string, max: number, claimIdleMs: number): Promise<ClaimedDelivery[]> {
    await this.ensureGroup();
    await this.redis.evalScript(this.scripts.promote, [this.keys.stream, this.keys.retry], [max]);
    // Entries a stopped consumer claimed and never finished first, then new ones.
    const reclaimed = await this.redis.run(
      (client) => client.xautoclaim(this.keys.stream, GROUP, consumer, Math.ceil(claimIdleMs), '0-0', 'COUNT', max) as Promise<unknown>,
    );
    const claimed = parseEntries((reclaimed as [string, StreamEntry[]])[1], consumer);
    if (claimed.length < max) {
      const reply = await this.redis.run(
        (client) =>
          client.xreadgroup('GROUP', GROUP, consumer, 'COUNT', max - claimed.length, 'STREAMS', this.keys.stream, '>') as Promise<unknown>,
      );
      const streams = (reply ?? []) as Array<[string, StreamEntry[]]>;
      for (const [, entries] of streams) claimed.push(...parseEntries(entries, consumer));
    }
    return claimed;
  }

  async complete(delivery: ClaimedDelivery, outcome: 'delivered' | 'dropped' | 'failed'): Promise<void> {
    const { id, consumer } = claimOf(delivery);
    await this.redis.evalScript(this.scripts.complete, [this.keys.stream, this.keys.pending, this.keys.failed], [GROUP, id, consumer, delivery.eventId, outcome, MAX_FAILED]);
  }

  async reschedule(delivery: ClaimedDelivery, delayMs: number): Promise<void> {
    await this.putBack(delivery, delayMs, 1);
  }

  async release(delivery: ClaimedDelivery, delayMs: number): Promise<void> {
    await this.putBack(delivery, delayMs, 0);
  }

  /** Out of the stream and into the retry schedule, in one step: see webhook-reschedule.lua. */
  private async putBack(delivery: ClaimedDelivery, delayMs: number, attempted: number): Promise<void> {
    const { handle: _handle, ...entry } = delivery;
    const { id, consumer } = claimOf(delivery);
    const next = JSON.stringify({ ...entry, attempts: entry.attempts + attempted });
    await this.redis.evalScript(this.scripts.reschedule, [this.keys.stream, this.keys.retry], [GROUP, id, next, Math.ceil(delayMs), consumer]);
  }

  async failed(): Promise<string[]> {
    return this.redis.run((client) => client.lrange(this.keys.failed, 0, -1));
  }

  async backlog(): Promise<OutboxBacklog> {
    const [depth, oldestAgeMs] = (await this.redis.evalScript(this.scripts.backlog, [this.keys.pending], [])) as [number, number];
    return { depth, oldestAgeMs };
  }

  /** The group reads from the stream's start: entries added before it existed are delivered too. */
  private async ensureGroup(): Promise<void> {
    if (this.groupReady) return;
    try {
      await this.redis.run((client) => client.xgroup('CREATE', this.keys.stream, GROUP, '0', 'MKSTREAM'));
    } catch (error) {
      if (!(error instanceof Error && error.message.includes('BUSYGROUP'))) throw error;
    }
    this.groupReady = true;
  }
}

/**
 * A claim's handle: the stream id and the consumer holding it (a stream id holds no space). Only
 * that consumer may finish the entry: one that stalled past the idle time has lost it.
 */
function claimOf(delivery: ClaimedDelivery): { id: string; consumer: string } {
  const at = delivery.handle.indexOf(' ');
  return { id: delivery.handle.slice(0, at), consumer: delivery.handle.slice(at + 1) };
}

/** Deleted entries come back from XAUTOCLAIM without fields; they are skipped. */
function parseEntries(entries: StreamEntry[], consumer: string): ClaimedDelivery[] {
  const parsed: ClaimedDelivery[] = [];
  for (const [id, fields] of entries) {
    const value = fields?.[1];
    if (value === undefined) continue;
    parsed.push({ ...(JSON.parse(value) as OutboxEntry), handle: `${id} ${consumer}` });
  }
  return parsed;
}
