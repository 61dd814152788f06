/**
 * The rate limits of contract §4 as groups of checks (the IP's; the key's and account's), one
 * counter and one rule each. Both stores evaluate groups the same way: in order, each all-or-nothing
 * (every rule first, then consume from all of them only when all allow, so a refused group consumes
 * nothing), and a refused group ends the evaluation: the groups after it are neither checked nor
 * consumed.
 */
import type { KeyLimitRequest, PolicyName, RateDecision, WindowPolicy } from './types.js';

const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;
/** Tolerance for floating-point TAT arithmetic (a GCRA interval such as 60 000 / 7 is not exact). */
export const EPSILON_MS = 0.001;

export type LimitRule =
  /** GCRA: one request per `intervalMs` sustained, `burst` more at once from rest. */
  | { kind: 'gcra'; intervalMs: number; burst: number }
  /** A fixed counter per UTC calendar day. */
  | { kind: 'day'; limit: number }
  /** At most `limit` in any rolling `windowMs`, exact (a sliding log of timestamps). */
  | { kind: 'log'; limit: number; windowMs: number };

export interface PolicyCheck {
  name: PolicyName;
  /**
   * The counter's identity. Redis uses it as the key (after its prefix): the hash tag puts every
   * counter of one account (or one IP) in the same cluster slot, so one script can touch them all.
   */
  counter: string;
  rule: LimitRule;
  limit: number;
  windowSeconds: number;
  /** What RateLimit-Policy advertises: the configured quota per window (and, for GCRA, its burst). */
  quota: number;
  burst?: number;
}

/** One rule's answer: its state after the request (consumed only when every rule allowed it). */
export interface RuleOutcome {
  allowed: boolean;
  remaining: number;
  resetMs: number;
  /** When this rule refused: ms until it would allow the request. */
  retryAfterMs: number;
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

function windowRule(policy: WindowPolicy): LimitRule {
  requirePositive('limit', policy.limit);
  requirePositive('windowMs', policy.windowMs);
  return { kind: 'log', limit: policy.limit, windowMs: policy.windowMs };
}

export function ipChecks(ip: string, policy: WindowPolicy): PolicyCheck[] {
  return [
    {
      name: 'ip_minute',
      counter: `{ip:${keyPart(ip)}}:minute`,
      rule: windowRule(policy),
      limit: policy.limit,
      windowSeconds: policy.windowMs / 1000,
      quota: policy.limit,
    },
  ];
}

export function keyChecks(request: KeyLimitRequest): PolicyCheck[] {
  const account = accountTag(request.accountId);
  const key = `${account}:key:${keyPart(request.keyId)}`;
  const { ratePerMinute, burst, periodMs = MINUTE_MS } = request.perMinute;
  requirePositive('ratePerMinute', ratePerMinute);
  requirePositive('periodMs', periodMs);
  requirePositive('perDay', request.perDay);
  if (!(burst >= 0)) throw new RangeError(`burst must be 0 or more, got ${burst}`);
  const checks: PolicyCheck[] = [
    {
      name: 'key_minute',
      counter: `${key}:minute`,
      rule: { kind: 'gcra', intervalMs: periodMs / ratePerMinute, burst },
      limit: burst + 1,
      windowSeconds: periodMs / 1000,
      quota: ratePerMinute,
      burst,
    },
    {
      name: 'key_day',
      counter: `${key}:day`,
      rule: { kind: 'day', limit: request.perDay },
      limit: request.perDay,
      windowSeconds: DAY_MS / 1000,
      quota: request.perDay,
    },
  ];
  const accountPolicy = request.accountPerMinute;
  if (accountPolicy) {
    checks.push({
      name: 'account_minute',
      counter: `${account}:minute`,
      rule: windowRule(accountPolicy),
      limit: accountPolicy.limit,
      windowSeconds: accountPolicy.windowMs / 1000,
      quota: accountPolicy.limit,
    });
  }
  return checks;
}

/** Retry-After of a refusal: when every violated rule allows again, and never less than 1 ms. */
export function toDecision(checks: PolicyCheck[], outcomes: RuleOutcome[]): RateDecision {
  const violated = checks.flatMap((check, index) => (outcomeAt(outcomes, index).allowed ? [] : [check.name]));
  const retryAfterMs = outcomes.reduce((latest, outcome) => Math.max(latest, outcome.allowed ? 0 : outcome.retryAfterMs), 0);
  return {
    allowed: violated.length === 0,
    violated,
    retryAfterMs: violated.length === 0 ? null : Math.max(1, Math.ceil(retryAfterMs)),
    policies: checks.map((check, index) => {
      const outcome = outcomeAt(outcomes, index);
      return {
        name: check.name,
        limit: check.limit,
        remaining: outcome.remaining,
        resetMs: outcome.resetMs,
        windowSeconds: check.windowSeconds,
        quota: check.quota,
        ...(check.burst === undefined ? {} : { burst: check.burst }),
      };
    }),
  };
}

function outcomeAt(outcomes: RuleOutcome[], index: number): RuleOutcome {
  const outcome = outcomes[index];
  if (!outcome) throw new Error(`no outcome for policy ${index}`);
  return outcome;
}
