/**
 * The four rate limits of contract §4 over a RateLimitStore, normalised once from config. When the
 * shared store is down, limiting falls back to a per-instance memory store (fail open) or answers
 * 503 (fail closed), as configured; a store error never turns into a 429 or a 500.
 */
import { isIPv4 } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import ipaddr from 'ipaddr.js';
import { LRUCache } from 'lru-cache';
import type { GatewayConfig } from '../config.js';
import { ApiError } from '../errors.js';
import type { RateLimitObserver } from '../ops/observers.js';
import { ipGroup, keyGroup } from '../stores/rate-policies.js';
import {
  StoreUnavailableError,
  type ApiKeyRecord,
  type GcraPolicy,
  type KeyLimitRequest,
  type PolicyGroup,
  type PolicyState,
  type RateDecision,
  type RateLimitStore,
  type WindowPolicy,
} from '../stores/types.js';

export interface RateLimiterOptions {
  store: RateLimitStore;
  /** Used while `store` is unreachable and limits fail open. */
  fallback: RateLimitStore;
  config: Pick<GatewayConfig, 'rateLimits' | 'profile'>;
  log: FastifyBaseLogger;
  /** Hears every decision, store error and fallback (metrics). */
  observer?: RateLimitObserver;
}

export class RateLimiter {
  private readonly ipPolicy: WindowPolicy;
  /**
   * Each key record's policies, built once: a changed record is a new object (the key cache
   * replaces it), and a record read again unchanged is the same object (the key cache keeps it).
   */
  private readonly keyGroups = new WeakMap<ApiKeyRecord, PolicyGroup>();
  /** The source addresses seen lately, each with its policy group (a store prepares a group once). */
  private readonly ipGroups = new LRUCache<string, PolicyGroup>({ max: 10_000 });
  /**
   * Whether the last store call failed: the outage is logged when it starts and when it ends, not
   * per request (every request decides, so an outage would flood the log).
   */
  private storeDown = false;

  constructor(private readonly options: RateLimiterOptions) {
    const limits = options.config.rateLimits;
    this.ipPolicy = { limit: limits.ipPerMinute, windowMs: limits.windowMs };
  }

  /** The source-IP limit alone (a request with no key to check with it). */
  hitIp(ip: string): Promise<RateDecision> {
    return this.decide([this.ipGroup(ip)]);
  }

  /** The key and account limits alone (the source IP was counted already). */
  hitKey(key: ApiKeyRecord): Promise<RateDecision> {
    return this.decide([this.keyGroup(key)]);
  }

  /** Both in one store call, the IP first: the hot path of an authenticated request. */
  hitIpAndKey(ip: string, key: ApiKeyRecord): Promise<RateDecision> {
    return this.decide([this.ipGroup(ip), this.keyGroup(key)]);
  }

  private ipGroup(ip: string): PolicyGroup {
    let group = this.ipGroups.get(ip);
    if (!group) this.ipGroups.set(ip, (group = ipGroup(ipLimitSource(ip, this.options.config.rateLimits.ipv6PrefixLength), this.ipPolicy)));
    return group;
  }

  private keyGroup(key: ApiKeyRecord): PolicyGroup {
    let group = this.keyGroups.get(key);
    if (!group) this.keyGroups.set(key, (group = keyGroup(keyLimits(key, this.options.config))));
    return group;
  }

  private decide(groups: PolicyGroup[]): Promise<RateDecision> {
    // One promise on the way (every request decides): no async frames around the store's.
    const started = performance.now();
    const answered = (decision: RateDecision): RateDecision => {
      if (this.storeDown) this.storeBack();
      this.options.observer?.decided(decision, (performance.now() - started) / 1000);
      return decision;
    };
    return this.options.store.hit(groups).then(answered, (error: unknown) => this.decideWithout(error, groups, started));
  }

  /** The shared store failed: fail closed (503), or open on the per-instance fallback. */
  private async decideWithout(error: unknown, groups: PolicyGroup[], started: number): Promise<RateDecision> {
    const { observer } = this.options;
    if (!(error instanceof StoreUnavailableError)) throw error;
    observer?.storeError('rate_limits');
    if (!this.storeDown) this.storeGone(error);
    if (this.options.config.rateLimits.onStoreError === 'closed') {
      throw new ApiError('store_unavailable', 'The rate-limit store is unavailable; retry shortly.', {
        headers: { 'retry-after': '1' },
        cause: error,
      });
    }
    observer?.storeFallback('rate_limits', 'memory');
    const decision = await this.options.fallback.hit(groups);
    observer?.decided(decision, (performance.now() - started) / 1000);
    return decision;
  }

  /** Once per outage: the store every request meets first (Redis) stopped answering. */
  private storeGone(error: Error): void {
    this.storeDown = true;
    const closed = this.options.config.rateLimits.onStoreError === 'closed';
    this.options.log.error(
      { err: error.message, on_store_error: this.options.config.rateLimits.onStoreError },
      closed
        ? 'shared store (Redis) unreachable: every request answers 503 store_unavailable until it is back (rateLimits.onStoreError: closed); check Redis'
        : 'shared store (Redis) unreachable: limiting per instance, writes and keys not held answer 503 store_unavailable until it is back; check Redis',
    );
  }

  private storeBack(): void {
    this.storeDown = false;
    this.options.log.info('shared store (Redis) reachable again: rate limits shared again');
  }
}

/** `203.0.113.7:51234`, `[2001:db8::1]:51234` or `[2001:db8::1]`: the address in group 1 or 2. */
const WITH_PORT = /^(?:(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}|\[([0-9A-Fa-f:.]+)\](?::\d{1,5})?)$/;

/**
 * What the source-IP limit counts: an IPv4 address as it is (IPv4-mapped IPv6 included, so a
 * dual-stack socket changes nothing), an IPv6 address as its network of `ipv6PrefixLength` bits;
 * a port written with either is dropped.
 */
export function ipLimitSource(ip: string, ipv6PrefixLength: number): string {
  if (isIPv4(ip)) return ip;
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.process(ip);
  } catch {
    // A trusted proxy may write the client's port too (Azure's Application Gateway does): the port
    // is not the client, or each connection would get a budget of its own.
    const bare = WITH_PORT.exec(ip);
    if (bare) return ipLimitSource((bare[1] ?? bare[2]) as string, ipv6PrefixLength);
    // Not an address (a socket already gone): counted under its own text, as before.
    return ip;
  }
  if (address.kind() === 'ipv4') return address.toString();
  const bytes = address.toByteArray();
  for (let bit = ipv6PrefixLength; bit < 128; bit++) bytes[bit >> 3] = (bytes[bit >> 3] as number) & ~(0x80 >> (bit & 7));
  return `${ipaddr.fromByteArray(bytes).toString()}/${ipv6PrefixLength}`;
}

function seconds(ms: number): number {
  return Math.max(0, Math.ceil(ms / 1000));
}

/**
 * Contract §3: X-RateLimit-* for the per-key policy closest to exhaustion (reset in delta seconds),
 * plus the IETF RateLimit-Policy / RateLimit fields for every policy that applied (the source-IP
 * one only when it refused). The two families say one thing (docs/rate-limits.md):
 * - RateLimit-Policy states the rule as configured: `q` requests per `w` seconds sustained, and for
 *   the per-key minute limit the burst on top as the vendor parameter `rg-burst` (60/60 s + 20).
 * - RateLimit `r` and X-RateLimit-Remaining: requests that may be sent now. X-RateLimit-Limit: the
 *   most a limit allows at once from rest (burst + 1 = 21 for the minute limit, the quota for the
 *   others), so Remaining counts down from Limit. `t` and X-RateLimit-Reset: seconds until Remaining
 *   is back at Limit.
 */
export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  const headers: Record<string, string> = {};
  // One pass (this runs on every request): the key policy that binds, and the fields of each reported.
  let closest: PolicyState | undefined;
  // Joined once at the end: flat text, where `+=` would keep a tree of its parts (about 30 nodes of
  // 32 bytes) for as long as the response is held, a slow upstream call's 200 ms included.
  const states: string[] = [];
  let reported = 0;
  let stated = true;
  for (const p of decision.policies) {
    if (p.name === 'key_minute' || p.name === 'key_day') {
      // Fewest remaining; on a tie, the one that takes longer to recover is the one that binds.
      if (closest === undefined || p.remaining < closest.remaining || (p.remaining === closest.remaining && p.resetMs > closest.resetMs)) closest = p;
    }
    if (!isReported(p, decision)) continue;
    states.push(`"${p.name}";r=${Math.max(0, p.remaining)};t=${seconds(p.resetMs)}`);
    if (stated && !statesAlike(lastStated.policies[reported], p)) stated = false;
    reported += 1;
  }
  const policy = stated && reported === lastStated.policies.length ? lastStated.text : policyText(decision);
  if (closest) {
    headers['x-ratelimit-limit'] = String(closest.limit);
    headers['x-ratelimit-remaining'] = String(Math.max(0, closest.remaining));
    headers['x-ratelimit-reset'] = String(seconds(closest.resetMs));
  }
  if (policy !== '') {
    headers['ratelimit-policy'] = policy;
    headers['ratelimit'] = states.join(', ');
  }
  return headers;
}

/**
 * The source-IP policy is reported only when it refused: it is not the key's, and the fields should
 * stay the same across a key's responses.
 */
function isReported(p: PolicyState, decision: RateDecision): boolean {
  return p.name !== 'ip_minute' || decision.violated.includes('ip_minute');
}

/** What RateLimit-Policy states of a policy: the rule, which the decisions of most requests share. */
type StatedPolicy = Pick<PolicyState, 'name' | 'quota' | 'windowSeconds' | 'burst'>;

/**
 * The RateLimit-Policy text made last, and the policies it states: the next decision that reports
 * the same rules reuses it (one flat string) instead of making the same text again.
 */
const lastStated: { policies: StatedPolicy[]; text: string } = { policies: [], text: '' };

function statesAlike(stated: StatedPolicy | undefined, p: PolicyState): boolean {
  return stated !== undefined && stated.name === p.name && stated.quota === p.quota && stated.windowSeconds === p.windowSeconds && stated.burst === p.burst;
}

/** The RateLimit-Policy text of the decision's reported policies; remembered as `lastStated`. */
function policyText(decision: RateDecision): string {
  const policies: StatedPolicy[] = [];
  let text = '';
  for (const p of decision.policies) {
    if (!isReported(p, decision)) continue;
    text += `${text === '' ? '' : ', '}"${p.name}";q=${p.quota};w=${p.windowSeconds}${p.burst === undefined ? '' : `;rg-burst=${p.burst}`}`;
    policies.push({ name: p.name, quota: p.quota, windowSeconds: p.windowSeconds, burst: p.burst });
  }
  lastStated.policies = policies;
  lastStated.text = text;
  return text;
}

export function rateLimitedError(decision: RateDecision, headers: Record<string, string>): ApiError {
  const retryAfter = Math.max(1, seconds(decision.retryAfterMs ?? 1000));
  return new ApiError('rate_limited', `Rate limit exceeded (${decision.violated.join(', ')}); retry after ${retryAfter} s.`, {
    headers: { ...headers, 'retry-after': String(retryAfter) },
    extensions: { violated_policies: decision.violated },
  });
}

/** The limits a key runs under: config defaults with the key's own overrides (contract §4). */
export function keyLimits(key: ApiKeyRecord, config: Pick<GatewayConfig, 'rateLimits' | 'profile'>): KeyLimitRequest {
  const limits = config.rateLimits;
  const perMinute: GcraPolicy = {
    ratePerMinute: key.rateLimits?.perMinute ?? limits.keyPerMinute,
    burst: key.rateLimits?.burst ?? limits.keyBurst,
    periodMs: limits.windowMs,
  };
  return {
    accountId: key.accountId,
    keyId: key.id,
    perMinute,
    perDay: key.rateLimits?.perDay ?? limits.keyPerDay,
    accountPerMinute: config.profile === 'A' ? { limit: limits.accountPerMinute, windowMs: limits.windowMs } : null,
  };
}
