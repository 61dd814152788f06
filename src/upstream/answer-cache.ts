/**
 * Answer reuse for reads: identical concurrent calls share one upstream request (coalescing), and
 * actions declared cacheable keep their answers for a TTL, then serve them stale while one refresh
 * runs (stale-while-revalidate), except to a read that asks for a fresh one. Writes bump an epoch
 * and drop the caches they invalidate, so a read that starts after a write never joins or stores
 * an answer from before it.
 */
import { LRUCache } from 'lru-cache';
import { monotonicNow } from './monotonic.js';

/** Cached answers are served stale (while one refresh runs) up to this many TTLs old. */
const STALE_FACTOR = 10;
const ENTRIES_PER_ACTION = 256;

interface CachedAnswer<A> {
  answer: A;
  freshUntil: number;
}

interface ActionCache<A> {
  entries: LRUCache<string, CachedAnswer<A>>;
  /** Bumped on invalidation: a load that started before it must not store its answer. */
  generation: number;
}

/** What the cache reports, per action (for metrics). */
export interface AnswerCacheEvents {
  cacheLookup(action: string, result: 'hit' | 'stale' | 'miss'): void;
  coalesced(action: string): void;
}

export interface AnswerCache<A> {
  /** Joins the identical call in flight (started since the last write), or starts `load`. */
  coalesced(action: string, key: string, load: () => Promise<A>): Promise<A>;
  /**
   * A fresh cached answer, else a stale one while one refresh runs (`onStaleRefreshFailed` hears
   * of that refresh's failure), else the load itself.
   */
  cached(action: string, ttlMs: number, key: string, load: () => Promise<A>, onStaleRefreshFailed: (error: unknown) => void): Promise<A>;
  /** A fresh cached answer, else the load (or the refresh already in flight): never a stale answer. */
  fresh(action: string, ttlMs: number, key: string, load: () => Promise<A>): Promise<A>;
  /** After a write: later reads start new flights, and the named actions' answers are dropped. */
  written(invalidates: readonly string[]): void;
  /** Drops `answer` if it is the one kept for the call (its caller found it unusable): the next read loads again. */
  forget(action: string, key: string, answer: A): void;
  clear(): void;
}

export function createAnswerCache<A>(now: () => number = monotonicNow, events?: AnswerCacheEvents): AnswerCache<A> {
  let writeEpoch = 0;
  const inFlight = new Map<string, Promise<A>>();
  const caches = new Map<string, ActionCache<A>>();

  function coalesced(action: string, key: string, load: () => Promise<A>): Promise<A> {
    const flightKey = `${writeEpoch}\n${key}`;
    const existing = inFlight.get(flightKey);
    if (existing) {
      events?.coalesced(action);
      return existing;
    }
    const flight = load().finally(() => inFlight.delete(flightKey));
    inFlight.set(flightKey, flight);
    return flight;
  }

  function cacheOf(action: string, ttlMs: number): ActionCache<A> {
    let cache = caches.get(action);
    if (!cache) {
      // The LRU's own expiry runs on the same clock (read at each lookup, not cached for 1 ms).
      const entries = new LRUCache<string, CachedAnswer<A>>({ max: ENTRIES_PER_ACTION, ttl: ttlMs * STALE_FACTOR, perf: { now }, ttlResolution: 0 });
      cache = { entries, generation: 0 };
      caches.set(action, cache);
    }
    return cache;
  }

  /** The load, joined with the identical one in flight, its answer stored unless a write invalidated the action meanwhile. */
  function refresh(cache: ActionCache<A>, action: string, ttlMs: number, key: string, load: () => Promise<A>): Promise<A> {
    const generation = cache.generation;
    return coalesced(action, key, async () => {
      const answer = await load();
      if (cache.generation === generation) cache.entries.set(key, { answer, freshUntil: now() + ttlMs });
      return answer;
    });
  }

  return {
    coalesced,

    cached(action, ttlMs, key, load, onStaleRefreshFailed) {
      const cache = cacheOf(action, ttlMs);
      const entry = cache.entries.get(key);
      if (entry && entry.freshUntil > now()) {
        events?.cacheLookup(action, 'hit');
        return Promise.resolve(entry.answer);
      }
      events?.cacheLookup(action, entry ? 'stale' : 'miss');
      const loaded = refresh(cache, action, ttlMs, key, load);
      if (!entry) return loaded;
      loaded.catch(onStaleRefreshFailed);
      return Promise.resolve(entry.answer);
    },

    fresh(action, ttlMs, key, load) {
      const cache = cacheOf(action, ttlMs);
      const entry = cache.entries.get(key);
      if (entry && entry.freshUntil > now()) {
        events?.cacheLookup(action, 'hit');
        return Promise.resolve(entry.answer);
      }
      // Past its TTL the answer is not served: the caller waits for the load, as on a miss.
      events?.cacheLookup(action, 'miss');
      return refresh(cache, action, ttlMs, key, load);
    },

    written(invalidates) {
      writeEpoch += 1;
      for (const action of invalidates) {
        const cache = caches.get(action);
        if (!cache) continue;
        cache.generation += 1;
        cache.entries.clear();
      }
    },

    forget(action, key, answer) {
      const entries = caches.get(action)?.entries;
      if (entries?.peek(key)?.answer === answer) entries.delete(key);
    },

    clear() {
      for (const cache of caches.values()) cache.entries.clear();
    },
  };
}
