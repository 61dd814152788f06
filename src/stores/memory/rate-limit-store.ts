/**
 * Rate limits in process memory, for one instance (sandbox mode, or the fail-open fallback). Same
 * rules as the Redis script (src/stores/redis/lua/rate-limit.lua); one synchronous section per
 * request is what makes check-and-consume atomic here.
 */
import { LRUCache } from 'lru-cache';
import { DAY_MS, EPSILON_MS, ipChecks, keyChecks, toDecision } from '../rate-policies.js';
import type { LimitRule, PolicyCheck, RuleOutcome } from '../rate-policies.js';
import type { KeyLimitRequest, RateDecision, RateLimitStore, WindowPolicy } from '../types.js';

type CounterState =
  | { kind: 'gcra'; tat: number }
  | { kind: 'day'; day: number; count: number }
  | { kind: 'log'; times: number[] };

/** A rule looked at now: whether it allows, what it reports, and how to consume from it. */
interface Evaluation {
  allowed: boolean;
  retryAfterMs: number;
  report(): Pick<RuleOutcome, 'remaining' | 'resetMs'>;
  consume(): { state: CounterState; ttlMs: number };
}

export interface MemoryRateLimitStoreOptions {
  now?: () => number;
  /** Counters kept at most; the least recently used go first (that key starts afresh). */
  maxCounters?: number;
}

export class MemoryRateLimitStore implements RateLimitStore {
  private readonly now: () => number;
  private readonly counters: LRUCache<string, CounterState>;

  constructor(options: MemoryRateLimitStoreOptions = {}) {
    const now = options.now ?? Date.now;
    this.now = now;
    // The counters expire on the same (injectable) clock as the rules read.
    this.counters = new LRUCache({ max: options.maxCounters ?? 100_000, perf: { now }, ttlResolution: 0 });
  }

  async hitIp(ip: string, policy: WindowPolicy): Promise<RateDecision> {
    return this.hit(ipChecks(ip, policy));
  }

  async hitKey(request: KeyLimitRequest): Promise<RateDecision> {
    return this.hit(keyChecks(request));
  }

  async hitIpAndKey(ip: string, ipPolicy: WindowPolicy, request: KeyLimitRequest): Promise<RateDecision> {
    return this.hit(ipChecks(ip, ipPolicy), keyChecks(request));
  }

  private hit(...groups: PolicyCheck[][]): RateDecision {
    const now = this.now();
    const checked: PolicyCheck[] = [];
    const outcomes: RuleOutcome[] = [];
    for (const group of groups) {
      const evaluated = group.map((check) => ({
        counter: check.counter,
        evaluation: evaluate(check.rule, this.counters.get(check.counter), now),
      }));
      const allowed = evaluated.every(({ evaluation }) => evaluation.allowed);
      for (const { counter, evaluation } of evaluated) {
        if (allowed) {
          const { state, ttlMs } = evaluation.consume();
          this.counters.set(counter, state, { ttl: Math.max(1, Math.ceil(ttlMs)) });
        }
        outcomes.push({ allowed: evaluation.allowed, retryAfterMs: evaluation.retryAfterMs, ...evaluation.report() });
      }
      checked.push(...group);
      if (!allowed) break;
    }
    return toDecision(checked, outcomes);
  }
}

function evaluate(rule: LimitRule, state: CounterState | undefined, now: number): Evaluation {
  switch (rule.kind) {
    case 'gcra':
      return evaluateGcra(rule, state?.kind === 'gcra' ? state : undefined, now);
    case 'day':
      return evaluateDay(rule, state?.kind === 'day' ? state : undefined, now);
    case 'log':
      return evaluateLog(rule, state?.kind === 'log' ? state : undefined, now);
  }
}

/** TAT = theoretical arrival time; a request is allowed while TAT is at most `burst` intervals ahead. */
function evaluateGcra(
  { intervalMs, burst }: Extract<LimitRule, { kind: 'gcra' }>,
  state: { tat: number } | undefined,
  now: number,
): Evaluation {
  let tat = Math.max(state?.tat ?? now, now);
  const allowed = tat - now <= burst * intervalMs + EPSILON_MS;
  return {
    allowed,
    retryAfterMs: allowed ? 0 : tat - now - burst * intervalMs,
    report: () => ({
      remaining: clamp(Math.floor(((burst + 1) * intervalMs - (tat - now) + EPSILON_MS) / intervalMs), 0, burst + 1),
      resetMs: Math.ceil(tat - now),
    }),
    consume: () => {
      tat += intervalMs;
      return { state: { kind: 'gcra', tat }, ttlMs: tat - now };
    },
  };
}

function evaluateDay(
  { limit }: Extract<LimitRule, { kind: 'day' }>,
  state: { day: number; count: number } | undefined,
  now: number,
): Evaluation {
  const today = Math.floor(now / DAY_MS);
  const untilMidnight = (today + 1) * DAY_MS - now;
  let count = state?.day === today ? state.count : 0;
  const allowed = count < limit;
  return {
    allowed,
    retryAfterMs: allowed ? 0 : untilMidnight,
    report: () => ({ remaining: Math.max(0, limit - count), resetMs: count > 0 ? Math.ceil(untilMidnight) : 0 }),
    consume: () => {
      count += 1;
      return { state: { kind: 'day', day: today, count }, ttlMs: untilMidnight };
    },
  };
}

function evaluateLog(
  { limit, windowMs }: Extract<LimitRule, { kind: 'log' }>,
  state: { times: number[] } | undefined,
  now: number,
): Evaluation {
  // A request at time t counts while now - t < windowMs; older ones are pruned (that consumes nothing).
  const times = (state?.times ?? []).filter((time) => time > now - windowMs);
  const allowed = times.length < limit;
  return {
    allowed,
    // The oldest entry whose departure brings the count below the limit.
    retryAfterMs: allowed ? 0 : (times[times.length - limit] as number) + windowMs - now,
    report: () => {
      const newest = times[times.length - 1];
      return {
        remaining: Math.max(0, limit - times.length),
        resetMs: newest === undefined ? 0 : Math.ceil(newest + windowMs - now),
      };
    },
    consume: () => {
      times.push(now);
      return { state: { kind: 'log', times }, ttlMs: windowMs };
    },
  };
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
