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
 * could tell apart, while 10 % (with a 4 MB young generation) nearly doubled the gateway's CPU.
 *
 * V8 reads this flag at every full collection, so setting it at run time works (the young
 * generation's size is fixed when the heap is set up: `--max-semi-space-size` must be on node's
 * command line; the Dockerfile and `npm start` pass it). A value given on node's command line wins.
 */
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_PERCENT = 20;

export function applyHeapSettings(): void {
  if (process.execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
