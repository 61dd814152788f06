/**
 * The heap settings take effect when applied at run time (src/startup/heap.ts), which V8 does not
 * promise for every flag. Child processes, each with a 1 MB young generation:
 * - one keeps 40 MB alive and churns objects that survive a young collection (the small young
 *   generation promotes them), and counts its full collections and its largest heap. Applied, the
 *   old generation is collected when it has grown by HEAP_GROWING_PERCENT (or V8's 8 MB minimum)
 *   instead of about twice: many more full collections, a much smaller heap;
 * - one keeps every object one literal makes (2 M), and counts its young collections. With
 *   pretenuring, V8 soon allocates that literal's objects in the old generation and the young
 *   collections stop (about 12); applied, every object passes through the young generation (about
 *   190 collections);
 * - one with the image's 8 MB young generation keeps 300 000 small objects alive (a heap well under
 *   60 MB) and promotes 100 KB a turn, which dies in the old generation. With a flat 20 % the room
 *   under the old generation's limit is V8's 8 MB step, no more than the young generation, and V8
 *   marks all the time (29–30 full collections); applied, the room is one and a half young
 *   generations (21).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import t from 'tap';
import { growingPercentFor, HEAP_GROWING_PERCENT } from '../../src/startup/heap.js';

/** How every child starts: the settings applied when APPLY=1, and its collections of one kind counted in `counter`. */
const prelude = (counter: 'full' | 'young', kind: 'MAJOR' | 'MINOR') => `
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { applyHeapSettings } from './src/startup/heap.ts';
if (process.env.APPLY === '1') applyHeapSettings();
let ${counter} = 0;
new PerformanceObserver((list) => { for (const entry of list.getEntries()) if (entry.detail.kind === constants.NODE_PERFORMANCE_GC_${kind}) ${counter} += 1; }).observe({ entryTypes: ['gc'] });
`;

const CHILD = `${prelude('full', 'MAJOR')}const live = Array.from({ length: 300_000 }, (_, i) => ({ i, text: 'x' + i, list: [i] }));
const ring = new Array(20_000);
let largest = 0;
for (let i = 0; i < 2_000_000; i += 1) {
  ring[i % ring.length] = { i, text: 'y' + i, list: [i, i + 1] };
  if (i % 100_000 === 0) {
    largest = Math.max(largest, process.memoryUsage().heapUsed);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
await new Promise((resolve) => setTimeout(resolve, 100));
process.stdout.write(JSON.stringify({ full, largestMb: largest / 2 ** 20, live: live.length }));
`;

const PRETENURING_CHILD = `${prelude('young', 'MINOR')}const make = (i) => ({ i, next: null, text: 'k' });
const kept = [];
for (let round = 0; round < 20; round += 1) {
  for (let i = 0; i < 100_000; i += 1) kept.push(make(i));
  await new Promise((resolve) => setImmediate(resolve));
}
await new Promise((resolve) => setTimeout(resolve, 50));
process.stdout.write(JSON.stringify({ young, kept: kept.length }));
`;

const ROOM_CHILD = `${prelude('full', 'MAJOR')}const live = Array.from({ length: 300_000 }, (_, i) => ({ i, text: 'x' + i }));
const kept = [];
const slots = new Array(256);
for (let turn = 0; turn < 6_000; turn += 1) {
  for (let j = 0; j < 4_000; j += 1) slots[j & 255] = [j, j + 1, j + 2, turn];
  kept.push(Array.from({ length: 1_000 }, (_, j) => ({ j, turn })));
  if (kept.length > 40) kept.shift();
  await new Promise((resolve) => setImmediate(resolve));
}
process.stdout.write(JSON.stringify({ full, live: live.length, slots: slots.length }));
`;

function runChild<T>(source: string, apply: boolean, nodeArgs: string[] = []): T {
  const result = spawnSync(process.execPath, ['--max-semi-space-size=1', ...nodeArgs, '--import', 'tsx', '--input-type=module', '-e', source], {
    env: { ...process.env, APPLY: apply ? '1' : '0' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout) as T;
}

const run = (apply: boolean, nodeArgs: string[] = []) => runChild<{ full: number; largestMb: number }>(CHILD, apply, nodeArgs);
const runPretenuring = (apply: boolean, nodeArgs: string[] = []) => runChild<{ young: number }>(PRETENURING_CHILD, apply, nodeArgs);

/** A child's run with the settings applied, made once: two tests compare against each. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}
const runRoom = (nodeArgs: string[]) => runChild<{ full: number }>(ROOM_CHILD, true, ['--max-semi-space-size=8', ...nodeArgs]);
const runApplied = once(() => run(true));
const runPretenuringApplied = once(() => runPretenuring(true));

t.test('applied at run time, the old generation is collected before it doubles', async () => {
  const without = run(false);
  const applied = runApplied();
  t.comment(`without: ${JSON.stringify(without)}; applied: ${JSON.stringify(applied)}`);
  assert.ok(applied.full >= 2 * without.full, `full collections: ${applied.full} applied, ${without.full} without`);
  assert.ok(applied.largestMb < 0.75 * without.largestMb, `largest heap: ${applied.largestMb} MB applied, ${without.largestMb} MB without`);
});

t.test("a value on node's command line wins", async () => {
  const given = run(true, ['--heap-growing-percent=300']);
  const applied = runApplied();
  assert.ok(given.largestMb > applied.largestMb * 1.5, `largest heap: ${given.largestMb} MB given 300 %, ${applied.largestMb} MB applied`);
});

t.test('applied at run time, no allocation site is pretenured: long-lived objects pass through the young generation', async () => {
  const without = runPretenuring(false);
  const applied = runPretenuringApplied();
  t.comment(`young collections: ${without.young} without, ${applied.young} applied`);
  assert.ok(applied.young >= 5 * without.young, `young collections: ${applied.young} applied, ${without.young} without`);
});

t.test("pretenuring given on node's command line wins", async () => {
  const given = runPretenuring(true, ['--allocation-site-pretenuring']);
  const applied = runPretenuringApplied();
  assert.ok(applied.young >= 5 * given.young, `young collections: ${given.young} given, ${applied.young} applied`);
});

t.test('on a small heap, the old generation keeps room for one and a half young generations: V8 no longer marks all the time', async () => {
  const flat = runRoom(['--heap-growing-percent=20']);
  const applied = runRoom([]);
  t.comment(`full collections: ${flat.full} at a flat 20 %, ${applied.full} applied`);
  assert.ok(applied.full <= 0.8 * flat.full, `full collections: ${applied.full} applied, ${flat.full} at a flat 20 %`);
});

t.test('the growth: 20 %, or what leaves one and a half young generations of room, at most 50 %', async () => {
  const MB = 2 ** 20;
  assert.equal(growingPercentFor(200 * MB, 8 * MB), HEAP_GROWING_PERCENT);
  assert.equal(growingPercentFor(60 * MB, 8 * MB), HEAP_GROWING_PERCENT);
  assert.equal(growingPercentFor(29 * MB, 8 * MB), 42);
  assert.equal(growingPercentFor(40 * MB, 8 * MB), 30);
  assert.equal(growingPercentFor(10 * MB, 8 * MB), 50);
  assert.equal(growingPercentFor(0, 8 * MB), 50);
  assert.equal(growingPercentFor(40 * MB, 1 * MB), HEAP_GROWING_PERCENT);
});
