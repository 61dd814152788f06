/**
 * The rate limits and idempotency windows as the document states them: the deployment's configured
 * ones (config `rateLimits`, `idempotency`), which GET /v1/me, 429s and replays follow, not the
 * contract's defaults.
 */
import { IdempotencyConfigSchema, RateLimitConfigSchema, type GatewayConfig, type Profile } from '../config.js';

export type DocumentedLimits = Pick<GatewayConfig['rateLimits'], 'keyPerMinute' | 'keyBurst' | 'keyPerDay' | 'ipPerMinute' | 'accountPerMinute'>;
export type DocumentedWindows = Pick<GatewayConfig['idempotency'], 'replayWindowMs' | 'profileBWindowMs'>;

/** What a gateway configured with no `rateLimits` or `idempotency` follows (scripts, docs). */
export const DEFAULT_LIMITS: DocumentedLimits = RateLimitConfigSchema.parse({});
export const DEFAULT_WINDOWS: DocumentedWindows = IdempotencyConfigSchema.parse({});

const count = (n: number) => n.toLocaleString('en-US');

export function rateLimitsText(limits: DocumentedLimits, profile: Profile): string {
  const interval = 60 / limits.keyPerMinute;
  const pace = interval === 1 ? 'one per second' : `one every ${Number(interval.toFixed(2))} s`;
  return (
    `Rate limits: per key ${count(limits.keyPerMinute)}/min with a burst of ${count(limits.keyBurst)} (${count(limits.keyBurst + 1)} at once from rest, then ${pace}) ` +
    `and ${count(limits.keyPerDay)} per UTC day; per source IP ${count(limits.ipPerMinute)}/min` +
    (profile === 'A' ? `; per account ${count(limits.accountPerMinute)}/min across its keys.` : '.') +
    ' A key may carry its own limits: GET /v1/me shows them.'
  );
}

export function idempotencyText(windows: DocumentedWindows, profile: Profile): string {
  return profile === 'A'
    ? `Idempotency: a key replays for ${duration(windows.replayWindowMs)}, then answers 410 \`replay_stale\`; the same key on another endpoint is 409.`
    : `Idempotency: records live ${duration(windows.profileBWindowMs)}, after which the key is new again; the same key on another endpoint is 409.`;
}

/** A window in the largest whole unit that states it exactly: "one hour", "24 hours", "90 seconds". */
function duration(ms: number): string {
  const [size, unit] = ms % 3_600_000 === 0 ? [ms / 3_600_000, 'hour'] : ms % 60_000 === 0 ? [ms / 60_000, 'minute'] : [ms / 1000, 'second'];
  return size === 1 ? `one ${unit}` : `${count(size)} ${unit}s`;
}
