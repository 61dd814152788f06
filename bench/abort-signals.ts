/**
 * `npm run bench:abort-signals`: what a webhook delivery attempt's abort signal leaves on the heap
 * for good. Each attempt combines its deadline with the worker's stop signal, which lives as long
 * as the process. Three ways, each over the same number of attempts in a fresh heap (after a full
 * collection): a bare AbortController (the baseline: nothing combined), AbortSignal.any with the
 * long-lived signal, and attemptSignal (src/webhooks/attempt-signal.ts), as transport.ts uses it.
 * Counted, not timed.
 */
import { parseArgs } from 'node:util';
import { attemptSignal } from '../src/webhooks/attempt-signal.js';

const { values: flags } = parseArgs({
  options: { attempts: { type: 'string', default: '300000' }, help: { type: 'boolean', default: false } },
});
if (flags.help) {
  process.stdout.write(`npm run bench:abort-signals [-- options]
  --attempts N   delivery attempts per way, each in a fresh heap (default 300000)
`);
  process.exit(0);
}
const attempts = Number(flags.attempts);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc (npm run bench:abort-signals does)');

/** Full collections with turns of the event loop between them, so that finalizers run (Node's any() cleans up in one). */
async function settle(): Promise<void> {
  for (let round = 0; round < 3; round += 1) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    gc!();
  }
}

async function retainedBytes(attempt: (stop: AbortSignal) => void): Promise<number> {
  const stop = new AbortController();
  await settle();
  const before = process.memoryUsage().heapUsed;
  // In batches with a turn of the event loop between them, as attempts come in a worker.
  for (let i = 0; i < attempts; i += 1) {
    attempt(stop.signal);
    if (i % 1_000 === 999) await new Promise((resolve) => setImmediate(resolve));
  }
  await settle();
  const after = process.memoryUsage().heapUsed;
  // The stop signal is still alive here: whatever it keeps is counted.
  stop.signal.throwIfAborted();
  return after - before;
}

const ways: Array<[string, (stop: AbortSignal) => void]> = [
  ['bare AbortController (baseline)', () => void new AbortController()],
  ['AbortSignal.any([deadline, stop])', (stop) => void AbortSignal.any([new AbortController().signal, stop])],
  ['attemptSignal(deadline, stop) + done()', (stop) => attemptSignal(15_000, stop).done()],
];
process.stdout.write(`node ${process.version}, ${attempts} attempts each, heap kept after a full collection:\n`);
for (const [name, way] of ways) {
  const bytes = await retainedBytes(way);
  process.stdout.write(`  ${name.padEnd(40)} ${(bytes / 2 ** 20).toFixed(1).padStart(6)} MB  ${(bytes / attempts).toFixed(1).padStart(6)} B/attempt\n`);
}
