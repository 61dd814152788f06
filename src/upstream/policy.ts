/**
 * One declaration per upstream action a mapping uses. Many billing APIs are POST-only, so the HTTP
 * method says nothing about safety: the declaration decides what the client may retry, coalesce or
 * cache, and whether a failed call can have acted upstream.
 */
export type ActionSafety = 'read' | 'write';

export interface UpstreamAction<Id extends string = string> {
  /** The upstream's own name for the action (WHMCS `action`, FOSSBilling `module/method`). */
  readonly name: string;
  readonly safety: ActionSafety;
  /** Retried once, and only when the first attempt failed before any answer started (not sent, or sent and no status line), within the deadline. */
  readonly retry: boolean;
  /** Identical concurrent calls share one upstream request. */
  readonly coalesce: boolean;
  /** Answers are cached this long (then served stale while one refresh runs). */
  readonly cacheTtlMs?: number;
  /** Deadline of the whole call, retry included. */
  readonly timeoutMs: number;
  /** Cached answers of these actions are dropped once this action has run. */
  readonly invalidates?: readonly Id[];
}

export type ActionTable<Id extends string> = Readonly<Record<Id, UpstreamAction<Id>>>;

/**
 * How current a read's answer must be, asked per call:
 * - `cached` (the default): a cached answer, even a stale one while one refresh runs;
 * - `fresh`: a cached answer within its TTL, else the caller waits for the load (or the refresh in
 *   flight): for the checks before a write, which an outdated answer would let through;
 * - `uncached`: sent now, neither from the cache nor joined to an identical call in flight: for
 *   state that another process (another gateway worker) may have just changed.
 */
export type Freshness = 'cached' | 'fresh' | 'uncached';

/** The usual declarations: reads retry once when no answer started and coalesce; writes do neither. */
export function readAction<Id extends string>(name: string, timeoutMs: number, cacheTtlMs?: number): UpstreamAction<Id> {
  return { name, safety: 'read', retry: true, coalesce: true, timeoutMs, ...(cacheTtlMs === undefined ? {} : { cacheTtlMs }) };
}

export function writeAction<Id extends string>(name: string, timeoutMs: number, invalidates?: readonly Id[]): UpstreamAction<Id> {
  return { name, safety: 'write', retry: false, coalesce: false, timeoutMs, ...(invalidates === undefined ? {} : { invalidates }) };
}
