/**
 * A delivery attempt's signal: aborted at its deadline or by the worker's stop, and once the attempt
 * is done it holds nothing of the stop signal (which lives as long as the process).
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { attemptSignal } from '../../src/webhooks/attempt-signal.js';

t.test('aborted at the deadline, as timed out', async () => {
  const stop = new AbortController();
  const attempt = attemptSignal(20, stop.signal);
  assert.equal(attempt.signal.aborted, false);
  await sleep(60);
  assert.equal(attempt.signal.aborted, true);
  assert.equal(attempt.timedOut, true);
  assert.equal((attempt.signal.reason as DOMException).name, 'TimeoutError');
  attempt.done();
});

t.test('aborted when the worker stops, not as timed out; at once if it had stopped', async () => {
  const stop = new AbortController();
  const attempt = attemptSignal(60_000, stop.signal);
  stop.abort(new Error('stopping'));
  assert.equal(attempt.signal.aborted, true);
  assert.equal(attempt.timedOut, false);
  assert.equal((attempt.signal.reason as Error).message, 'stopping');
  attempt.done();
  const late = attemptSignal(60_000, stop.signal);
  assert.equal(late.signal.aborted, true);
  late.done();
});

t.test('done: no listener left on the stop signal, and the deadline no longer fires', async () => {
  const stop = new AbortController();
  const attempts = Array.from({ length: 100 }, () => attemptSignal(20, stop.signal));
  assert.equal(getEventListeners(stop.signal, 'abort').length, 100);
  for (const attempt of attempts) attempt.done();
  assert.equal(getEventListeners(stop.signal, 'abort').length, 0);
  await sleep(60);
  assert.ok(attempts.every((attempt) => !attempt.signal.aborted && !attempt.timedOut));
});

t.test('without a stop signal, the deadline alone', async () => {
  const attempt = attemptSignal(10);
  await sleep(40);
  assert.equal(attempt.timedOut, true);
  attempt.done();
});
