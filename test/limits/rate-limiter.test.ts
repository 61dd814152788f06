/**
 * The rate limiter's report to its observer (the metrics): each decision once, with the time from
 * asking the store to its answer, the per-instance fallback's included when the store failed; a
 * refusal for a store that failed with limits failing closed reports no decision.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { RateLimitConfigSchema } from '../../src/config.js';
import { ApiError } from '../../src/errors.js';
import { RateLimiter } from '../../src/limits/rate-limiter.js';
import type { RateLimitObserver, StoreName } from '../../src/ops/observers.js';
import { MemoryRateLimitStore } from '../../src/stores/memory/rate-limit-store.js';
import { StoreUnavailableError, type PolicyGroup, type RateDecision, type RateLimitStore } from '../../src/stores/types.js';

const silent = { warn: () => undefined, error: () => undefined, info: () => undefined } as unknown as ConstructorParameters<typeof RateLimiter>[0]['log'];

/** What the observer heard, in order. */
function listener(): RateLimitObserver & { heard: string[]; seconds: number[] } {
  const heard: string[] = [];
  const seconds: number[] = [];
  return {
    heard,
    seconds,
    decided: (decision: RateDecision, took: number) => {
      heard.push(`decided ${decision.allowed ? 'allowed' : 'refused'}`);
      seconds.push(took);
    },
    storeError: (store: StoreName) => void heard.push(`error ${store}`),
    storeFallback: (store: StoreName, fallback: string) => void heard.push(`fallback ${store} ${fallback}`),
  };
}

/** The memory store, answering (or failing) only after `delayMs`, as a Redis round trip would. */
function slowStore(delayMs: number, fails = false): RateLimitStore {
  const inner = new MemoryRateLimitStore();
  return {
    async hit(groups: readonly PolicyGroup[]) {
      await sleep(delayMs);
      if (fails) throw new StoreUnavailableError('connection refused');
      return inner.hit(groups);
    },
  };
}

function limiter(store: RateLimitStore, observer: RateLimitObserver, onStoreError: 'open' | 'closed' = 'open'): RateLimiter {
  const config = { rateLimits: RateLimitConfigSchema.parse({ onStoreError }), profile: 'A' as const };
  return new RateLimiter({ store, fallback: new MemoryRateLimitStore(), config, log: silent, observer });
}

t.test('each decision is reported once, with the time the store took to answer', async () => {
  const observer = listener();
  const decision = await limiter(slowStore(40), observer).hitIp('192.0.2.7');
  assert.equal(decision.allowed, true);
  assert.deepEqual(observer.heard, ['decided allowed']);
  const [took] = observer.seconds as [number];
  assert.ok(took >= 0.039 && took < 1, `${took} s for a store answering after 40 ms`);
});

t.test('a store that failed: the fallback decides, and its time counts from the first ask', async () => {
  const observer = listener();
  const decision = await limiter(slowStore(30, true), observer).hitIp('192.0.2.7');
  assert.equal(decision.allowed, true);
  assert.deepEqual(observer.heard, ['error rate_limits', 'fallback rate_limits memory', 'decided allowed']);
  assert.ok((observer.seconds[0] as number) >= 0.029, `${observer.seconds[0]} s: the failed call's wait included`);
});

t.test('limits that fail closed: a 503, and no decision reported', async () => {
  const observer = listener();
  await assert.rejects(limiter(slowStore(1, true), observer, 'closed').hitIp('192.0.2.7'), (error: unknown) => error instanceof ApiError && error.reason === 'store_unavailable');
  assert.deepEqual(observer.heard, ['error rate_limits']);
});
