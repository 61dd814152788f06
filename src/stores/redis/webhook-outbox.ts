/**
 * The webhook outbox in Redis: a stream read through one consumer group (any instance delivers),
 * retries waiting in a sorted set until due, given-up event ids in a capped list, and the events
 * not yet done in a pending set by enqueue time (the backlog the metrics show). An account has at
 * most its delivery share in the stream (new retries aside); the rest wait in order in a parked set
 * (bounded per account) and are admitted as its deliveries end, so a stream read reaches every account's next event
 * whatever one account has queued. The keys share one hash tag so the scripts that move entries
 * between them run on one cluster node.
 */
import { EVENT_NUMBER_KEPT_MS, numberedBody, sequenceSlot } from '../event-sequence.js';
import { MAX_WAITING_PER_ACCOUNT, type ClaimedDelivery, type EnqueueResult, type NewOutboxEntry, type OutboxAdmission, type OutboxBacklog, type OutboxEntry, type WebhookOutbox } from '../webhook-types.js';
import type { RedisConnection } from './connection.js';
import { LuaScript } from './lua-script.js';

const GROUP = 'deliverers';
const MAX_FAILED = 1_000;

type StreamEntry = [id: string, fields: string[] | null];

export class RedisWebhookOutbox implements WebhookOutbox {
  private readonly scripts = {
    enqueue: LuaScript.load('webhook-enqueue', 'outbox-line'),
    promote: LuaScript.load('webhook-promote'),
    reschedule: LuaScript.load('webhook-reschedule'),
    complete: LuaScript.load('webhook-complete'),
    backlog: LuaScript.load('webhook-backlog'),
    park: LuaScript.load('webhook-park', 'outbox-line'),
    admit: LuaScript.load('webhook-admit', 'outbox-line'),
  };
  private readonly keys: { stream: string; retry: string; failed: string; pending: string; parked: string; inStream: string; parkedAccounts: string; seq: string; eventNumbers: string };
  private groupReady = false;

  /**
   * `perAccount`: an account's entries in the stream at most (its delivery share); `maxWaiting`: its
   * parked entries at most; `sweepAfterMs`: an account whose parked entries nobody admitted for this
   * long is looked at again (the claim idle time).
   */
  constructor(
    private readonly redis: RedisConnection,
    private readonly admission: OutboxAdmission & { sweepAfterMs: number } = { perAccount: 2, maxWaiting: MAX_WAITING_PER_ACCOUNT, sweepAfterMs: 30_000 },
  ) {
    this.keys = {
      stream: redis.key('{webhooks}:outbox'),
      retry: redis.key('{webhooks}:retry'),
      failed: redis.key('{webhooks}:failed'),
      pending: redis.key('{webhooks}:pending'),
      parked: redis.key('{webhooks}:parked'),
      inStream: redis.key('{webhooks}:in-stream'),
      parkedAccounts: redis.key('{webhooks}:parked-accounts'),
      seq: redis.key('{webhooks}:seq'),
      eventNumbers: redis.key('{webhooks}:event-numbers'),
    };
  }

  async enqueue({ numbered = false, ...entry }: NewOutboxEntry): Promise<EnqueueResult> {
    const { head, tail } = storedValue(entry, numbered);
    const { stream, pending, parked, inStream, parkedAccounts, seq, eventNumbers } = this.keys;
    const { perAccount, sweepAfterMs, maxWaiting } = this.admission;
    const keys = [stream, pending, parked, inStream, parkedAccounts, seq, eventNumbers, this.redis.key(`{webhooks}:event-number:${entry.eventId}`)];
    const args = [entry.eventId, head, entry.accountId, perAccount, sweepAfterMs, maxWaiting, tail, numbered ? 1 : 0, EVENT_NUMBER_KEPT_MS];
    const [added, number] = (await this.redis.evalScript(this.scripts.enqueue, keys, args)) as [number, number];
    if (added === 0) return { outcome: 'already_waiting' };
    const body = numbered ? numberedBody(entry.body, number) : entry.body;
    return { outcome: added === 1 ? 'queued' : 'full', body };
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
    const { stream, retry, inStream, seq, parkedAccounts } = this.keys;
    const unswept = (await this.redis.evalScript(this.scripts.promote, [stream, retry, inStream, seq, parkedAccounts], [max])) as string[];
    for (const accountId of unswept) await this.admit(accountId);
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
    const keys = [this.keys.stream, this.keys.pending, this.keys.failed, this.keys.inStream];
    await this.redis.evalScript(this.scripts.complete, keys, [GROUP, id, consumer, delivery.eventId, outcome, MAX_FAILED, delivery.accountId]);
    await this.admit(delivery.accountId);
  }

  /** Out of the stream and into the retry schedule, in one step: see webhook-reschedule.lua. */
  async reschedule(delivery: ClaimedDelivery, delayMs: number): Promise<void> {
    const { handle: _handle, ...entry } = delivery;
    const { id, consumer } = claimOf(delivery);
    const next = JSON.stringify({ ...entry, attempts: entry.attempts + 1 });
    const keys = [this.keys.stream, this.keys.retry, this.keys.inStream];
    await this.redis.evalScript(this.scripts.reschedule, keys, [GROUP, id, next, Math.ceil(delayMs), consumer, delivery.accountId]);
    await this.admit(delivery.accountId);
  }

  async park(delivery: ClaimedDelivery): Promise<void> {
    const { id, consumer } = claimOf(delivery);
    const { stream, parked, inStream, parkedAccounts, seq } = this.keys;
    await this.redis.evalScript(this.scripts.park, [stream, parked, inStream, parkedAccounts, seq], [GROUP, id, consumer, delivery.accountId, this.admission.sweepAfterMs]);
  }

  /**
   * The account's next parked entries into the stream, up to its share (see webhook-admit.lua). An
   * instance dying before this call leaves them to the sweep, `sweepAfterMs` later.
   */
  private async admit(accountId: string): Promise<void> {
    const { stream, parked, inStream, parkedAccounts } = this.keys;
    const { perAccount, sweepAfterMs } = this.admission;
    await this.redis.evalScript(this.scripts.admit, [stream, parked, inStream, parkedAccounts], [accountId, perAccount, sweepAfterMs]);
  }

  async forgetAccount(accountId: string): Promise<void> {
    await this.redis.run((client) => client.hdel(this.keys.eventNumbers, accountId));
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
 * The entry as the stream holds it (its JSON), in two parts: numbered, webhook-enqueue.lua puts the
 * number between them, where numberedBody puts it in the body; else they are the whole.
 */
function storedValue(entry: Omit<OutboxEntry, 'attempts'>, numbered: boolean): { head: string; tail: string } {
  if (!numbered) return { head: JSON.stringify({ ...entry, attempts: 0 }), tail: '' };
  const { body, ...rest } = entry;
  const fields = JSON.stringify({ ...rest, attempts: 0 }).slice(0, -1);
  const slot = sequenceSlot(body);
  // JSON escapes a string one character at a time, and the cut is at an ASCII one: the two escaped
  // parts put together (around the digits) are the escaped whole.
  return { head: `${fields},"body":${JSON.stringify(slot.head).slice(0, -1)}`, tail: `${JSON.stringify(slot.tail).slice(1)}}` };
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
