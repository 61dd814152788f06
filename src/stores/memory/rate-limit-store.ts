/**
 * Rate limits in process memory, for one instance (sandbox mode, or the fail-open fallback). Same
 * rules and reports as the Redis script (src/stores/rate-policies.ts); one synchronous section per
 * decision is what makes check-and-consume atomic here.
 */
import { LRUCache } from 'lru-cache';
import { DAY_MS, ruleAllows, ruleOutcome, toDecision } from '../rate-policies.js';
import type { RuleOutcome, RuleReading } from '../rate-policies.js';
import type { LimitRule, PolicyCheck, PolicyGroup, RateDecision, RateLimitStore } from '../types.js';

/** A log's admit times, oldest first; the ones before `start` have left the window (dropped in bulk). */
interface Log {
  times: number[];
  start: number;
}

/** One counter: the state of each rule kind kept in it (a counter holds at most one of each). */
interface Counter {
  tat?: number;
  day?: { day: number; count: number };
  log?: Log;
}

export interface MemoryRateLimitStoreOptions {
  now?: () => number;
  /**
   * Counters kept at most, of source addresses and, apart, of keys and accounts; the least recently
   * used go first (that address or key starts afresh). Apart, so that requests from many addresses
   * (which anyone can send) never push a key's or an account's counter out.
   */
  maxCounters?: number;
}

/** Dropped entries of a log are spliced out once they are this many and half of it. */
const LOG_COMPACT_AT = 64;

export class MemoryRateLimitStore implements RateLimitStore {
  private readonly now: () => number;
  private readonly sources: LRUCache<string, Counter>;
  private readonly holders: LRUCache<string, Counter>;

  constructor(options: MemoryRateLimitStoreOptions = {}) {
    const now = options.now ?? Date.now;
    this.now = now;
    // The counters expire on the same (injectable) clock as the rules read.
    const counters = () => new LRUCache<string, Counter>({ max: options.maxCounters ?? 100_000, perf: { now }, ttlResolution: 0 });
    this.sources = counters();
    this.holders = counters();
  }

  private counters(check: PolicyCheck): LRUCache<string, Counter> {
    return check.name === 'ip_minute' ? this.sources : this.holders;
  }

  async hit(groups: readonly PolicyGroup[]): Promise<RateDecision> {
    const now = this.now();
    const checked: PolicyCheck[] = [];
    const outcomes: RuleOutcome[] = [];
    for (const group of groups) {
      const readings = group.map((check) => read(check.rule, this.counters(check).get(check.counter), now));
      const allowed = group.every((check, index) => ruleAllows(check.rule, readings[index] as RuleReading));
      if (allowed) this.consume(group, now);
      group.forEach((check, index) => outcomes.push(ruleOutcome(check.rule, readings[index] as RuleReading, allowed, now)));
      checked.push(...group);
      if (!allowed) break;
    }
    return toDecision(checked, outcomes);
  }

  private consume(group: PolicyGroup, now: number): void {
    // Each counter written once, with a TTL that covers every rule kept in it.
    const touched = new Map<string, { counter: Counter; ttlMs: number; table: LRUCache<string, Counter> }>();
    for (const check of group) {
      let entry = touched.get(check.counter);
      if (!entry) {
        const table = this.counters(check);
        touched.set(check.counter, (entry = { counter: table.get(check.counter) ?? {}, ttlMs: 0, table }));
      }
      entry.ttlMs = Math.max(entry.ttlMs, consume(check.rule, entry.counter, now));
    }
    for (const [name, { counter, ttlMs, table }] of touched) table.set(name, counter, { ttl: Math.max(1, Math.ceil(ttlMs)) });
  }
}

function read(rule: LimitRule, counter: Counter | undefined, now: number): RuleReading {
  switch (rule.kind) {
    case 'gcra':
      return { level: Math.max(0, (counter?.tat ?? now) - now), newest: 0, leaving: 0 };
    case 'day': {
      const day = counter?.day;
      return { level: day && day.day === Math.floor(now / DAY_MS) ? day.count : 0, newest: 0, leaving: 0 };
    }
    case 'log': {
      const log = counter?.log;
      if (!log) return { level: 0, newest: 0, leaving: 0 };
      const { times } = log;
      log.start = firstAfter(times, log.start, now - rule.windowMs);
      const count = times.length - log.start;
      return {
        level: count,
        newest: count > 0 ? (times[times.length - 1] as number) - now : 0,
        // The oldest entry whose departure brings the count below the limit.
        leaving: count >= rule.limit ? (times[log.start + count - rule.limit] as number) - now : 0,
      };
    }
  }
}

/** Consumes one request from the rule; returns how long the counter must live for it (ms). */
function consume(rule: LimitRule, counter: Counter, now: number): number {
  switch (rule.kind) {
    case 'gcra':
      counter.tat = Math.max(counter.tat ?? now, now) + rule.intervalMs;
      return counter.tat - now;
    case 'day': {
      const today = Math.floor(now / DAY_MS);
      const count = counter.day?.day === today ? counter.day.count : 0;
      counter.day = { day: today, count: count + 1 };
      return (today + 1) * DAY_MS - now;
    }
    case 'log': {
      const log = (counter.log ??= { times: [], start: 0 });
      if (log.start >= LOG_COMPACT_AT && log.start * 2 >= log.times.length) {
        log.times.splice(0, log.start);
        log.start = 0;
      }
      // Kept sorted even if the clock stepped back.
      log.times.push(Math.max(now, log.times[log.times.length - 1] ?? now));
      return rule.windowMs;
    }
  }
}

/** The index of the first time after `edge` (binary search from `from`: the times are sorted). */
function firstAfter(times: number[], from: number, edge: number): number {
  let low = from;
  let high = times.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((times[middle] as number) > edge) high = middle;
    else low = middle + 1;
  }
  return low;
}
