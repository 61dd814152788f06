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
 * Allocation-site pretenuring is off. Once most objects from one allocation site have survived
 * young collections, V8 allocates that site's objects straight in the old generation. Under the
 * bench's load the decision could fall, while the process started cold and its first requests were
 * slow, on sites of the HTTP server's per-request objects. Those then died in the old generation,
 * and what they pointed to in the young one survived every young collection until the next full one
 * (old-to-young references are roots of a young collection): 500 KB promoted per young collection,
 * a full collection every ~190 ms, 55–71 µs per request against 37–47, for the process's life, in
 * 4 of 14 runs; none in 26 runs with it off (README "Benchmark"). Long-lived objects now pass
 * through the young generation once, as everything else does.
 *
 * V8 reads both flags as it collects, so setting them at run time works (tested; the young
 * generation's size is fixed when the heap is set up: `--max-semi-space-size` must be on node's
 * command line; the Dockerfile and `npm start` pass it). A value given on node's command line wins.
 */
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_PERCENT = 20;

const RUNTIME_FLAGS: ReadonlyArray<{ name: string; setting: string }> = [
  { name: 'heap-growing-percent', setting: `--heap-growing-percent=${HEAP_GROWING_PERCENT}` },
  { name: 'allocation-site-pretenuring', setting: '--no-allocation-site-pretenuring' },
];

/** Whether node's command line sets the flag, either way (`--name`, `--no-name`, `--name=…`, dashes or underscores). */
function givenOnCommandLine(name: string): boolean {
  const pattern = new RegExp(`^--(no[-_])?${name.replaceAll('-', '[-_]')}(=|$)`);
  return process.execArgv.some((arg) => pattern.test(arg));
}

export function applyHeapSettings(): void {
  for (const flag of RUNTIME_FLAGS) if (!givenOnCommandLine(flag.name)) setFlagsFromString(flag.setting);
}
