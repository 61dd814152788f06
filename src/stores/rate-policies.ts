/**
 * The rate limits of contract §4 as groups of checks (the IP's; the key's and account's) and the
 * arithmetic of their rules, shared by both stores: a store reads each rule's state (a
 * `RuleReading`), the request is allowed when every rule of its group allows it (`ruleAllows`),
 * and what a policy reports follows from the reading and whether the request was consumed
 * (`ruleOutcome`). The stores differ only in where the state lives and how they keep it atomic.
 *
 * The rules, with `now` the store's clock:
 * - gcra: TAT (theoretical arrival time) = max(stored, now); allowed while TAT - now ≤ burst ×
 *   interval; consuming adds one interval.
 * - day: a count per UTC calendar day; allowed while count < limit.
 * - log: the times of the admitted requests; one at time t counts while now - t < window; allowed
 *   while fewer than `limit` count. Exact: never more than `limit` in any rolling window, and a
 *   request is admitted as soon as the exact window allows it.
 */
import type { KeyLimitRequest, LimitRule, PolicyCheck, PolicyGroup, RateDecision, WindowPolicy } from './types.js';

/**
 * The longest log window a store keeps, 2^30 ms (12 days): the Redis store holds a log's admit times
 * as 32-bit ms offsets, its origin moved once 2^31 ms old (redis/lua/rate-limit.lua). The config
 * refuses a longer window at boot.
 */
export const LONGEST_LOG_WINDOW_MS = 2 ** 30;

const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;
/** Tolerance for floating-point TAT arithmetic (a GCRA interval such as 60 000 / 7 is not exact). */
export const EPSILON_MS = 0.001;

/** What a store read of one rule's state before the request; times relative to the store's now. */
export interface RuleReading {
  /** gcra: TAT - now (≥ 0); day: today's count; log: the requests inside the window. */
  level: number;
  /** log: the newest admitted request's time - now (≤ 0 unless the clock stepped back); 0 when none. */
  newest: number;
  /** log, when full: the time - now of the request whose departure makes room for one more. */
  leaving: number;
}

/** One rule's answer: its state after the request (consumed only when every rule allowed it). */
export interface RuleOutcome {
  allowed: boolean;
  remaining: number;
  resetMs: number;
  /** When this rule refused: ms until it would allow the request. */
  retryAfterMs: number;
}

export function ruleAllows(rule: LimitRule, reading: RuleReading): boolean {
  return rule.kind === 'gcra' ? reading.level <= rule.burst * rule.intervalMs + EPSILON_MS : reading.level < rule.limit;
}

/** The policy's report after the request: `consumed` when its whole group allowed it. */
export function ruleOutcome(rule: LimitRule, reading: RuleReading, consumed: boolean, now: number): RuleOutcome {
  const allowed = ruleAllows(rule, reading);
  switch (rule.kind) {
    case 'gcra': {
      const { intervalMs, burst } = rule;
      const ahead = reading.level + (consumed ? intervalMs : 0);
      return {
        allowed,
        retryAfterMs: allowed ? 0 : reading.level - burst * intervalMs,
        remaining: clamp(Math.floor(((burst + 1) * intervalMs - ahead + EPSILON_MS) / intervalMs), 0, burst + 1),
        resetMs: Math.ceil(ahead),
      };
    }
    case 'day': {
      const untilMidnight = (Math.floor(now / DAY_MS) + 1) * DAY_MS - now;
      const count = reading.level + (consumed ? 1 : 0);
      return {
        allowed,
        retryAfterMs: allowed ? 0 : untilMidnight,
        remaining: Math.max(0, rule.limit - count),
        resetMs: count > 0 ? Math.ceil(untilMidnight) : 0,
      };
    }
    case 'log': {
      const count = reading.level + (consumed ? 1 : 0);
      // The window is full again (Remaining back at Limit) once the newest admitted request leaves.
      const newest = consumed ? Math.max(0, reading.newest) : reading.newest;
      return {
        allowed,
        retryAfterMs: allowed ? 0 : reading.leaving + rule.windowMs,
        remaining: Math.max(0, rule.limit - count),
        resetMs: count > 0 ? Math.max(0, Math.ceil(newest + rule.windowMs)) : 0,
      };
    }
  }
}

/** Keeps `{`, `}` and `:` out of ids so that they cannot break a hash tag or a key's structure. */
function keyPart(id: string): string {
  return encodeURIComponent(id);
}

function requirePositive(what: string, value: number): void {
  if (!(value > 0) || !Number.isFinite(value)) throw new RangeError(`${what} must be a positive number, got ${value}`);
}

export function accountTag(accountId: string): string {
  return `{acct:${keyPart(accountId)}}`;
}

/**
 * The parts joined as one flat string. V8 keeps a string built with `+` or a template as a tree of
 * its parts (32 bytes a node, every part kept) until something reads it whole, and a conversion
 * made only to flatten it is dropped by the optimiser as unused; join builds the string at once.
 * Counter names live as long as their key's record, thousands at once.
 */
export function flatString(...parts: string[]): string {
  return parts.join('');
}

function windowRule(policy: WindowPolicy): LimitRule {
  requirePositive('limit', policy.limit);
  requirePositive('windowMs', policy.windowMs);
  return sharedRule({ kind: 'log', limit: policy.limit, windowMs: policy.windowMs });
}

/**
 * Rules by content. Every key's group holds its rules for as long as its record is held, thousands
 * of groups at once, nearly all with the config's few rules: one object each instead of one a group
 * (never changed once made). Bounded, for keys with limits of their own.
 */
const rules = new Map<string, LimitRule>();
const MOST_RULES_SHARED = 1_000;

function sharedRule(rule: LimitRule): LimitRule {
  const id = rule.kind === 'gcra' ? `gcra ${rule.intervalMs} ${rule.burst}` : rule.kind === 'day' ? `day ${rule.limit}` : `log ${rule.limit} ${rule.windowMs}`;
  const held = rules.get(id);
  if (held) return held;
  if (rules.size < MOST_RULES_SHARED) rules.set(id, Object.freeze(rule));
  return rule;
}

/** The source-IP limit: its own group, counted before (and apart from) any key. */
export function ipGroup(ip: string, policy: WindowPolicy): PolicyGroup {
  return [
    {
      name: 'ip_minute',
      counter: flatString('{ip:', keyPart(ip), '}:window'),
      rule: windowRule(policy),
      limit: policy.limit,
      windowSeconds: policy.windowMs / 1000,
      quota: policy.limit,
      reportedOnlyWhenRefused: true,
    },
  ];
}

/** The key's minute and day limits (one counter) and, in Profile A, its account's window. */
export function keyGroup(request: KeyLimitRequest): PolicyGroup {
  const account = accountTag(request.accountId);
  const counter = flatString(account, ':key:', keyPart(request.keyId), ':limits');
  const { ratePerMinute, burst, periodMs = MINUTE_MS } = request.perMinute;
  requirePositive('ratePerMinute', ratePerMinute);
  requirePositive('periodMs', periodMs);
  requirePositive('perDay', request.perDay);
  if (!(burst >= 0)) throw new RangeError(`burst must be 0 or more, got ${burst}`);
  const minute: PolicyCheck = {
    name: 'key_minute',
    counter,
    rule: sharedRule({ kind: 'gcra', intervalMs: periodMs / ratePerMinute, burst }),
    limit: burst + 1,
    windowSeconds: periodMs / 1000,
    quota: ratePerMinute,
    burst,
  };
  const day: PolicyCheck = {
    name: 'key_day',
    counter,
    rule: sharedRule({ kind: 'day', limit: request.perDay }),
    limit: request.perDay,
    windowSeconds: DAY_MS / 1000,
    quota: request.perDay,
  };
  const accountPolicy = request.accountPerMinute;
  // Literals of their exact length: a group lives as long as its key's record is held (push would
  // leave room for 17 elements in each of thousands of them).
  if (!accountPolicy) return [minute, day];
  return [
    minute,
    day,
    {
      name: 'account_minute',
      counter: flatString(account, ':window'),
      rule: windowRule(accountPolicy),
      limit: accountPolicy.limit,
      windowSeconds: accountPolicy.windowMs / 1000,
      quota: accountPolicy.limit,
    },
  ];
}

/** Retry-After of a refusal: when every violated rule allows again, and never less than 1 ms. */
export function toDecision(checks: readonly PolicyCheck[], outcomes: readonly RuleOutcome[]): RateDecision {
  const violated: RateDecision['violated'] = [];
  const policies: RateDecision['policies'] = [];
  let retryAfterMs = 0;
  for (let index = 0; index < checks.length; index += 1) {
    const check = checks[index] as PolicyCheck;
    const outcome = outcomes[index];
    if (!outcome) throw new Error(`no outcome for policy ${index}`);
    if (!outcome.allowed) {
      violated.push(check.name);
      retryAfterMs = Math.max(retryAfterMs, outcome.retryAfterMs);
    }
    // Two literals rather than a spread of an optional part: no object made only to be copied.
    const { name, limit, windowSeconds, quota, burst } = check;
    const { remaining, resetMs } = outcome;
    policies.push(burst === undefined ? { name, limit, remaining, resetMs, windowSeconds, quota } : { name, limit, remaining, resetMs, windowSeconds, quota, burst });
  }
  return {
    allowed: violated.length === 0,
    violated,
    retryAfterMs: violated.length === 0 ? null : Math.max(1, Math.ceil(retryAfterMs)),
    policies,
  };
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
