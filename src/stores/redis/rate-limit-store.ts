/**
 * Rate limits in Redis, checked and consumed by one script (lua/rate-limit.lua) that takes a
 * request's policies in groups. A standalone server takes all the groups in one call; a cluster runs
 * one group per call, since one script may touch one slot only and the IP's and the account's
 * counters hash apart.
 */
import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import { ipChecks, keyChecks, toDecision } from '../rate-policies.js';
import type { LimitRule, PolicyCheck, RuleOutcome } from '../rate-policies.js';
import type { KeyLimitRequest, RateDecision, RateLimitStore, WindowPolicy } from '../types.js';
import type { RedisConnection } from './connection.js';
import { LuaScript } from './lua-script.js';

const VALUES_PER_OUTCOME = 4;

/** What one script call answered: whether every group it was given allowed, and the outcomes of the policies it checked. */
interface ScriptReply {
  allowed: boolean;
  outcomes: RuleOutcome[];
}

export class RedisRateLimitStore implements RateLimitStore {
  private readonly script = LuaScript.load('rate-limit');
  private readonly oneGroupPerCall: boolean;

  constructor(private readonly redis: RedisConnection) {
    this.oneGroupPerCall = redis.client instanceof Cluster;
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

  /** Group by group in a cluster, sequentially: a refused group must leave the later ones untouched, as in the script. */
  private async hit(...groups: PolicyCheck[][]): Promise<RateDecision> {
    const calls = this.oneGroupPerCall ? groups.map((group) => [group]) : [groups];
    const outcomes: RuleOutcome[] = [];
    for (const call of calls) {
      const reply = await this.runScript(call);
      outcomes.push(...reply.outcomes);
      if (!reply.allowed) break;
    }
    return toDecision(groups.flat().slice(0, outcomes.length), outcomes);
  }

  private async runScript(groups: PolicyCheck[][]): Promise<ScriptReply> {
    const checks = groups.flat();
    const keys = checks.map((check) => this.redis.key(check.counter));
    // The member makes each sliding-log entry unique, even two in the same microsecond.
    const args = [
      randomUUID(),
      ...groups.flatMap((group) => [group.length, ...group.flatMap((check) => ruleArguments(check.rule))]),
    ];
    return parseReply(await this.redis.evalScript(this.script, keys, args), checks.length);
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

/**
 * The reply is `[allowed, then per policy checked: allowed, remaining, resetMs, retryAfterMs]`: all
 * `policyCount` policies when allowed, fewer when a group refused before the last one.
 */
function parseReply(reply: unknown, policyCount: number): ScriptReply {
  const checked = Array.isArray(reply) ? (reply.length - 1) / VALUES_PER_OUTCOME : Number.NaN;
  const allowed = Array.isArray(reply) && reply[0] === 1;
  if (
    !Array.isArray(reply) ||
    !reply.every(Number.isInteger) ||
    !Number.isInteger(checked) ||
    !(allowed ? checked === policyCount : checked >= 1 && checked <= policyCount)
  ) {
    throw new Error(`unexpected reply from the rate-limit script: ${JSON.stringify(reply)}`);
  }
  const values = reply as number[];
  const outcomes = Array.from({ length: checked }, (_, index) => {
    const [policyAllowed, remaining, resetMs, retryAfterMs] = values.slice(1 + index * VALUES_PER_OUTCOME) as [
      number,
      number,
      number,
      number,
    ];
    return { allowed: policyAllowed === 1, remaining, resetMs, retryAfterMs };
  });
  return { allowed, outcomes };
}
