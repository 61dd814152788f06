/**
 * The admin API's own rate limit: `admin.perMinute` calls per token in any rolling minute, counted
 * in the shared rate-limit store (so across instances), as a window counter of its own. When the
 * store is down it counts per instance, as v1's limits do by default. This is the only place that
 * knows the store's interface.
 */
import { ApiError } from '../errors.js';
import { MemoryRateLimitStore } from '../stores/memory/index.js';
import { ipGroup } from '../stores/rate-policies.js';
import { StoreUnavailableError, type RateDecision, type RateLimitStore, type WindowPolicy } from '../stores/types.js';

/** The policy a refused call passed, in the 429's `violated_policies` (contract §2), as v1's name theirs. */
export const ADMIN_POLICY = 'admin_token_minute';

export class AdminRateLimit {
  private readonly policy: WindowPolicy;
  private readonly fallback = new MemoryRateLimitStore();

  constructor(
    private readonly store: RateLimitStore,
    perMinute: number,
  ) {
    this.policy = { limit: perMinute, windowMs: 60_000 };
  }

  /** Counts a call of `tokenName`; throws 429 rate_limited (with Retry-After and violated_policies) past the limit. */
  async hit(tokenName: string): Promise<void> {
    // Its own counter: no source address or key id can look like this.
    // A rolling-window group like the source-IP one, on a counter of its own.
    const groups = [ipGroup(`admin-token:${tokenName}`, this.policy)];
    let decision: RateDecision;
    try {
      decision = await this.store.hit(groups);
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      decision = await this.fallback.hit(groups);
    }
    if (decision.allowed) return;
    const retryAfter = Math.max(1, Math.ceil((decision.retryAfterMs ?? 1_000) / 1000));
    throw new ApiError('rate_limited', `Admin rate limit exceeded (${this.policy.limit} calls per minute per token); retry after ${retryAfter} s.`, {
      headers: { 'retry-after': String(retryAfter) },
      extensions: { violated_policies: [ADMIN_POLICY] },
    });
  }
}
