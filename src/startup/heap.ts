/**
 * Garbage-collection settings of the gateway process, applied by every process that serves
 * (src/server.ts: a single process, a cluster's primary and each of its workers).
 *
 * A gateway's heap is a long-lived part (code, config, the key cache: about 60 MB under the soak's
 * 10 000 keys) and a stream of short-lived requests, a little of which is promoted. V8's default
 * lets the old generation reach about twice what survived the last full collection before it
 * collects again, so the promoted garbage piles up to 60+ MB and the resident memory swings with
 * it (README "Benchmark"). Collecting when the heap has grown by 20 % (V8 still waits for at least
 * 8 MB more) keeps it near its live size; in the bench it added no full collection that a GC trace
 * could tell apart, while 10 % (with a 4 MB young generation) nearly doubled the gateway's CPU. On
 * a small heap the growth is larger, enough for one and a half young generations (ROOM_IN_YOUNG_GENERATIONS).
 *
 * Allocation-site pretenuring is off. Once most objects from one allocation site have survived
 * young collections, V8 allocates that site's objects straight in the old generation. Under the
 * bench's load the decision could fall, while the process started cold and its first requests were
 * slow, on sites of the HTTP server's per-request objects. Those then died in the old generation,
 * and what they pointed to in the young one survived every young collection until the next full one
 * (old-to-young references are roots of a young collection): 500 KB promoted per young collection,
 * a full collection every ~190 ms, 55–71 µs per request against 37–47, for the process's life, in
 * 4 of 14 runs; none in 26 runs with it off (docs/benchmark-rounds.md, "the slow mode"). Long-lived objects now pass
 * through the young generation once, as everything else does.
 *
 * V8 reads both flags as it collects, so setting them at run time works (tested; the young
 * generation's size is fixed when the heap is set up: `--max-semi-space-size` must be on node's
 * command line; the Dockerfile and `npm start` pass it). A value given on node's command line wins.
 * They also pass `--single-threaded-gc`, so that the collector's helper threads do not take the
 * cores Redis and the upstream need (README "Tail latency: the collector on one thread").
 */
import { constants, type NodeGCPerformanceDetail, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_PERCENT = 20;

/**
 * The old generation's room after a full collection, at least, in young generations. V8 starts
 * marking once the room left under the old generation's limit is no more than the young
 * generation's capacity. 20 % of a small heap (29 MB live with few keys) is less than V8's
 * smallest step, 8 MB, so the room was 8 MB from the start, the young generation's capacity at
 * the image's 8 MB semi-spaces: under a load that promotes (a slow upstream's pages of rows) V8
 * marked all the time, 26 full collections in 8 s. Half a young generation more lets a few young
 * collections promote before marking starts; from 60 MB live on (the soak's 10 000 keys) 20 % is
 * as much. Twice the capacity, up to 100 %, cost the soak 10 MB of resident memory for good and
 * 166 MB while its keys were first read (docs/benchmark-rounds.md, the ninth round).
 */
const ROOM_IN_YOUNG_GENERATIONS = 1.5;
/** The growth asked for the room, at most: a heap still filling (start-up, keys first read) would otherwise double. */
const MAX_GROWING_PERCENT = 50;

/** Whether node's command line sets the flag, either way (`--name`, `--no-name`, `--name=…`, dashes or underscores). */
function givenOnCommandLine(name: string): boolean {
  const pattern = new RegExp(`^--(no[-_])?${name.replaceAll('-', '[-_]')}(=|$)`);
  return process.execArgv.some((arg) => pattern.test(arg));
}

/** The old generation's growth, in percent: HEAP_GROWING_PERCENT, or what leaves it its room. */
export function growingPercentFor(oldGenerationBytes: number, youngCapacityBytes: number): number {
  const forRoom = Math.ceil((100 * ROOM_IN_YOUNG_GENERATIONS * youngCapacityBytes) / Math.max(oldGenerationBytes, 1));
  return Math.min(MAX_GROWING_PERCENT, Math.max(HEAP_GROWING_PERCENT, forRoom));
}

/** The growth for what the old generation holds now (the young generation's capacity is one of its two semi-spaces). */
function growingPercentNow(): number {
  let oldGeneration = 0;
  let youngCapacity = 0;
  for (const space of getHeapSpaceStatistics()) {
    if (space.space_name === 'new_space') youngCapacity = space.space_size / 2;
    else if (space.space_name !== 'new_large_object_space') oldGeneration += space.space_used_size;
  }
  return growingPercentFor(oldGeneration, youngCapacity);
}

/** Node gives a 'gc' entry its kind in `detail`, which the entry's type does not name. */
function isFullCollection(entry: PerformanceEntry): boolean {
  return (entry as PerformanceEntry & { detail?: NodeGCPerformanceDetail }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR;
}

/**
 * Sets the growth now, and again after each full collection from what survived it: V8 computes
 * the old generation's next limit as it collects, from the flag's value then.
 */
function keepOldGenerationRoom(): void {
  let current = growingPercentNow();
  setFlagsFromString(`--heap-growing-percent=${current}`);
  new PerformanceObserver((list) => {
    if (!list.getEntries().some(isFullCollection)) return;
    const percent = growingPercentNow();
    if (percent === current) return;
    current = percent;
    setFlagsFromString(`--heap-growing-percent=${percent}`);
  }).observe({ entryTypes: ['gc'] });
}

export function applyHeapSettings(): void {
  if (!givenOnCommandLine('heap-growing-percent')) keepOldGenerationRoom();
  if (!givenOnCommandLine('allocation-site-pretenuring')) setFlagsFromString('--no-allocation-site-pretenuring');
}
