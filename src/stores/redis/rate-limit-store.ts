/**
 * Rate limits in Redis, checked and consumed by one script (lua/rate-limit.lua) per decision.
 *
 * A standalone server takes every group in one call: one round trip, the source-IP group and the
 * key's group decided together. A cluster runs one group per call, in order: a script may touch one
 * slot only, and the IP's counter (hash tag `{ip:…}`) and the account's (`{acct:…}`) hash apart.
 * Going group by group keeps the semantics of one decision: a refused group stops before the next
 * is sent, so nothing of it is consumed, and a group allowed before a refused one stays counted,
 * exactly as the script does within one call; only the atomicity across groups is lost, which no
 * rule needs (each group is all-or-nothing on its own node). The price is a second round trip on a
 * cluster for an authenticated request.
 */
import { Cluster } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { flatString, LONGEST_LOG_WINDOW_MS, ruleAllows, ruleOutcome, toDecision } from '../rate-policies.js';
import type { RuleOutcome, RuleReading } from '../rate-policies.js';
import type { PolicyCheck, PolicyGroup, RateDecision, RateLimitStore } from '../types.js';
import type { RedisConnection } from './connection.js';
import { LuaScript } from './lua-script.js';

/** A group as the script takes it, built once per group object. */
interface EncodedGroup {
  /** Its counters, each once, prefixed (a headed log's header in place of the log). */
  keys: string[];
  /** A headed log's own key: the call's last, read only when needed (lua/rate-limit.lua). */
  headedLog: string | undefined;
  /** Its part of ARGV[1]: which parts it has, then their numbers. */
  spec: Buffer;
  /** Doubles of its reply alone: `now`, then 3 for its log and 1 for each other policy. */
  replyLength: number;
  /** Per check, in order: where its reading starts in the group's part of the reply. */
  readingAt: readonly number[];
  /**
   * The call for the last group that went before this one, and that group (a key's group after its
   * source address's: a key is mostly used from one address, so its call is mostly the same).
   */
  after?: { first: PolicyGroup; plan: CallPlan };
}

/** One script call, ready to send (see plan). */
interface CallPlan {
  groups: readonly PolicyGroup[];
  /** The groups' encodings, in order (where each check's reading is). */
  encoded: readonly EncodedGroup[];
  /** The groups' checks, in order. */
  checks: readonly PolicyCheck[];
  keyCount: number;
  /** The script's KEYS, then its ARGV. */
  keysAndArgs: ReadonlyArray<string | Buffer>;
}

export class RedisRateLimitStore implements RateLimitStore {
  private readonly script = LuaScript.load('rate-limit');
  private readonly oneGroupPerCall: boolean;
  private readonly encoded = new WeakMap<PolicyGroup, EncodedGroup>();
  /** Groups encoded with a headed log: the source address's, first in its call. */
  private readonly encodedHeaded = new WeakMap<PolicyGroup, EncodedGroup>();
  /**
   * Specs by content, and specs of two groups joined: a spec depends on the rules only (every
   * source address's group has the same), so there are few, each built once.
   */
  private readonly specs = new LRUCache<string, Buffer>({ max: 1_000 });
  private readonly joined = new WeakMap<Buffer, WeakMap<Buffer, Buffer>>();
  /** struct formats (`>ddd…`) by length. */
  private readonly formats = new Map<number, string>();

  constructor(private readonly redis: RedisConnection) {
    this.oneGroupPerCall = redis.client instanceof Cluster;
  }

  hit(groups: readonly PolicyGroup[]): Promise<RateDecision> {
    if (this.oneGroupPerCall) return this.hitGroupByGroup(groups);
    let plan: CallPlan;
    try {
      plan = this.plan(groups);
    } catch (error) {
      // A group the script cannot take: refused as the promise, like any other failure.
      return Promise.reject(error);
    }
    // One promise on the way from the reply to the decision (every authenticated request decides).
    return this.send(plan).then((reply) => {
      const outcomes = readReply(reply, plan);
      return toDecision(outcomes.length === plan.checks.length ? plan.checks : plan.checks.slice(0, outcomes.length), outcomes);
    });
  }

  private async hitGroupByGroup(groups: readonly PolicyGroup[]): Promise<RateDecision> {
    const outcomes: RuleOutcome[] = [];
    for (const group of groups) {
      const groupOutcomes = await this.run(this.plan([group]));
      outcomes.push(...groupOutcomes);
      if (groupOutcomes.some((outcome) => !outcome.allowed)) break;
    }
    const checks = groups.flat();
    return toDecision(outcomes.length === checks.length ? checks : checks.slice(0, outcomes.length), outcomes);
  }

  /** One script call; the outcomes of the policies it checked (fewer than given after a refusal). */
  private run(plan: CallPlan): Promise<RuleOutcome[]> {
    return this.send(plan).then((reply) => readReply(reply, plan));
  }

  private send(plan: CallPlan): Promise<Buffer> {
    return this.redis.evalScriptBuffer(this.script, plan.keyCount, plan.keysAndArgs);
  }

  /**
   * The call for these groups. Each group's part is encoded once (encode), and the specs of two
   * groups are joined once (join); a key's group keeps its call with the address it came from last.
   */
  private plan(groups: readonly PolicyGroup[]): CallPlan {
    if (groups.length === 2) {
      const [first, second] = groups as [PolicyGroup, PolicyGroup];
      const encoded = this.encode(second, false);
      if (encoded.after?.first !== first) encoded.after = { first, plan: this.assemble(groups) };
      return encoded.after.plan;
    }
    return this.assemble(groups);
  }

  private assemble(groups: readonly PolicyGroup[]): CallPlan {
    const keysAndArgs: Array<string | Buffer> = [];
    let spec: Buffer | undefined;
    let replyLength = 1;
    const encodings: EncodedGroup[] = [];
    for (const [index, group] of groups.entries()) {
      // The script takes a headed log in the first group only.
      const encoded = this.encode(group, index === 0);
      encodings.push(encoded);
      keysAndArgs.push(...encoded.keys);
      spec = spec === undefined ? encoded.spec : this.join(spec, encoded.spec);
      replyLength += encoded.replyLength - 1;
    }
    const headedLog = encodings[0]?.headedLog;
    if (headedLog !== undefined) keysAndArgs.push(headedLog);
    const keyCount = keysAndArgs.length;
    keysAndArgs.push(...this.argv(spec as Buffer, replyLength));
    // Copies of their exact length: a pair's plan is kept as long as its key's group (push and flat
    // leave room for 17 elements, in each of thousands of plans).
    return { groups, encoded: encodings.slice(), checks: groups.flat().slice(), keyCount, keysAndArgs: keysAndArgs.slice() };
  }

  /** ARGV: the spec and the struct formats of the spec and of the reply. */
  private argv(spec: Buffer, replyLength: number): [Buffer, string, string] {
    return [spec, this.format(spec.length / 8), this.format(replyLength)];
  }

  private encode(group: PolicyGroup, first: boolean): EncodedGroup {
    // A log reported only when it refuses, alone in its group, is headed (not read while far from full).
    const headed = first && group.length === 1 && (group[0] as PolicyCheck).rule.kind === 'log' && (group[0] as PolicyCheck).reportedOnlyWhenRefused === true;
    const cache = headed ? this.encodedHeaded : this.encoded;
    let encoded = cache.get(group);
    if (encoded) return encoded;
    const { counter, gcra, day, log } = groupShape(group);
    const numbers = [(gcra ? PART.gcra : 0) + (day ? PART.day : 0) + (log ? (headed ? PART.headedLog : PART.log) : 0)];
    if (gcra?.rule.kind === 'gcra') numbers.push(gcra.rule.intervalMs, gcra.rule.burst);
    if (day?.rule.kind === 'day') numbers.push(day.rule.limit);
    if (log?.rule.kind === 'log') {
      // A log's entries are 4-byte ms offsets, its origin moved once 2^31 ms old (lua/rate-limit.lua).
      if (log.rule.windowMs > LONGEST_LOG_WINDOW_MS) throw new RangeError(`a window of ${log.rule.windowMs} ms is longer than the Redis log keeps (${LONGEST_LOG_WINDOW_MS} ms)`);
      numbers.push(log.rule.limit, log.rule.windowMs);
    }
    const content = numbers.join(' ');
    let spec = this.specs.get(content);
    if (!spec) {
      spec = Buffer.alloc(numbers.length * 8);
      for (const [index, value] of numbers.entries()) spec.writeDoubleBE(value, index * 8);
      this.specs.set(content, spec);
    }
    // The reply gives gcra, day, then log (3 values); each check's reading is at its kind's place.
    const logAt = (gcra ? 1 : 0) + (day ? 1 : 0);
    const prefix = this.redis.keyPrefix;
    encoded = {
      keys: [counter, log && (headed ? flatString(log.counter, HEADER_SUFFIX) : log.counter)].filter((name) => name !== undefined).map((name) => flatString(prefix, name)),
      headedLog: headed && log ? flatString(prefix, log.counter) : undefined,
      spec,
      replyLength: 1 + logAt + (log ? 3 : 0),
      readingAt: sharedOffsets(group.map((check) => (check.rule.kind === 'gcra' ? 0 : check.rule.kind === 'day' ? (gcra ? 1 : 0) : logAt))),
    };
    cache.set(group, encoded);
    return encoded;
  }

  private join(first: Buffer, second: Buffer): Buffer {
    let withFirst = this.joined.get(first);
    if (!withFirst) this.joined.set(first, (withFirst = new WeakMap()));
    let spec = withFirst.get(second);
    if (!spec) withFirst.set(second, (spec = Buffer.concat([first, second])));
    return spec;
  }

  private format(length: number): string {
    let format = this.formats.get(length);
    if (format === undefined) this.formats.set(length, (format = `>${'d'.repeat(length)}`));
    return format;
  }
}

/** Reading offsets by content: a group's depend on its shape only, and every key holds a group. */
const offsets = new Map<string, readonly number[]>();

function sharedOffsets(readingAt: number[]): readonly number[] {
  const id = readingAt.join(' ');
  let held = offsets.get(id);
  // At most one of each kind per group (groupShape): a few shapes, never more.
  if (!held) offsets.set(id, (held = Object.freeze(readingAt)));
  return held;
}

/** Each part of a group's spec (lua/rate-limit.lua), summed into its first number. */
const PART = { gcra: 1, day: 2, log: 4, headedLog: 8 } as const;

/** A headed log's header key: the log's own key and this. */
const HEADER_SUFFIX = ':header';

interface GroupShape {
  /** The counter of the gcra and day policies. */
  counter?: string;
  gcra?: PolicyCheck;
  day?: PolicyCheck;
  log?: PolicyCheck;
}

/**
 * A group's policies by kind: the script takes at most one gcra and one day policy, on one counter,
 * and one log on a counter of its own (what ipGroup and keyGroup build).
 */
function groupShape(group: PolicyGroup): GroupShape {
  const shape: GroupShape = {};
  for (const check of group) {
    const kind = check.rule.kind;
    if (shape[kind]) throw new Error(`a group holds two ${kind} policies (${check.name}); the Redis store takes one of each`);
    shape[kind] = check;
    if (kind === 'log') continue;
    if (shape.counter !== undefined && shape.counter !== check.counter) throw new Error(`the gcra and day policies of a group keep one counter, not ${shape.counter} and ${check.counter}`);
    shape.counter = check.counter;
  }
  if (shape.log && shape.log.counter === shape.counter) throw new Error(`counter ${shape.counter} holds a log and another policy`);
  return shape;
}

/** One group's readings, filled by readReply for each group in turn (synchronously: never shared). */
const READINGS: RuleReading[] = [];

/**
 * The reply is `now`, then per group checked its readings (see the script): gcra, day, then log;
 * groups after a refused one are absent.
 */
function readReply(reply: Buffer, plan: CallPlan): RuleOutcome[] {
  const values = reply.length / 8;
  if (!Number.isInteger(values) || values < 1) throw new Error(`unexpected reply from the rate-limit script (${reply.length} bytes)`);
  const now = reply.readDoubleBE(0);
  let at = 1;
  const outcomes: RuleOutcome[] = [];
  // Plain loops and reused readings: this runs on every authenticated request.
  for (let index = 0; index < plan.groups.length && at !== values; index += 1) {
    const group = plan.groups[index] as PolicyGroup;
    const encoded = plan.encoded[index] as EncodedGroup;
    const size = encoded.replyLength - 1;
    if (at + size > values) throw new Error(`rate-limit script reply ends inside a group (${values} values)`);
    let allowed = true;
    for (let position = 0; position < group.length; position += 1) {
      const start = (at + (encoded.readingAt[position] as number)) * 8;
      const isLog = (group[position] as PolicyCheck).rule.kind === 'log';
      const reading = (READINGS[position] ??= { level: 0, newest: 0, leaving: 0 });
      reading.level = reply.readDoubleBE(start);
      reading.newest = isLog ? reply.readDoubleBE(start + 8) : 0;
      reading.leaving = isLog ? reply.readDoubleBE(start + 16) : 0;
      if (!ruleAllows((group[position] as PolicyCheck).rule, reading)) allowed = false;
    }
    at += size;
    for (let position = 0; position < group.length; position += 1) {
      outcomes.push(ruleOutcome((group[position] as PolicyCheck).rule, READINGS[position] as RuleReading, allowed, now));
    }
    if (!allowed) break;
  }
  if (at !== values) throw new Error(`rate-limit script reply has ${values - at} values too many`);
  return outcomes;
}
