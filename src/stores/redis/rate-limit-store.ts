/** Rate limits in Redis: each request's policies checked and consumed by one script (lua/rate-limit.lua). */
import { randomUUID } from 'node:crypto';
import { ipChecks, keyChecks, toDecision } from '../rate-policies.js';
import type { LimitRule, PolicyCheck, RuleOutcome } from '../rate-policies.js';
import type { KeyLimitRequest, RateDecision, RateLimitStore, WindowPolicy } from '../types.js';
import type { RedisConnection } from './connection.js';
import { LuaScript } from './lua-script.js';

const VALUES_PER_OUTCOME = 4;

export class RedisRateLimitStore implements RateLimitStore {
  private readonly script = LuaScript.load('rate-limit');

  constructor(private readonly redis: RedisConnection) {}

  async hitIp(ip: string, policy: WindowPolicy): Promise<RateDecision> {
    return this.hit(ipChecks(ip, policy));
  }

  async hitKey(request: KeyLimitRequest): Promise<RateDecision> {
    return this.hit(keyChecks(request));
  }

  private async hit(checks: PolicyCheck[]): Promise<RateDecision> {
    const keys = checks.map((check) => this.redis.key(check.counter));
    // The member makes each sliding-log entry unique, even two in the same microsecond.
    const args = [randomUUID(), ...checks.flatMap((check) => ruleArguments(check.rule))];
    const reply = await this.redis.evalScript(this.script, keys, args);
    return toDecision(checks, parseOutcomes(reply, checks.length));
  }
}

function ruleArguments(rule: LimitRule): Array<string | number> {
  switch (rule.kind) {
    case 'gcra':
      return ['gcra', rule.intervalMs, rule.burst];
    case 'day':
      return ['day', rule.limit, 0];
    case 'log':
      return ['log', rule.limit, rule.windowMs];
  }
}

/** The reply is `[allowed, then per policy: allowed, remaining, resetMs, retryAfterMs]`. */
function parseOutcomes(reply: unknown, count: number): RuleOutcome[] {
  if (!Array.isArray(reply) || reply.length !== 1 + count * VALUES_PER_OUTCOME || !reply.every(Number.isInteger)) {
    throw new Error(`unexpected reply from the rate-limit script: ${JSON.stringify(reply)}`);
  }
  const values = reply as number[];
  return Array.from({ length: count }, (_, index) => {
    const [allowed, remaining, resetMs, retryAfterMs] = values.slice(1 + index * VALUES_PER_OUTCOME) as [
      number,
      number,
      number,
      number,
    ];
    return { allowed: allowed === 1, remaining, resetMs, retryAfterMs };
  });
}
