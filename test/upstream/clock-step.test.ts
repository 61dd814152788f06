/**
 * The wall clock can be stepped back (NTP correcting a fast clock, a VM resumed from a snapshot).
 * What the gateway times in durations must not stretch with it: an open circuit breaker that waits
 * for the wall clock to catch up refuses every upstream call (503) for as long as the step.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { BackendError } from '../../src/backend/backend.js';
import { createCircuitBreaker } from '../../src/upstream/breaker.js';
import { createAnswerCache } from '../../src/upstream/answer-cache.js';

/** The wall clock as the code under test reads it: `stepBack()` sets it an hour behind the real one. */
const realNow = Date.now;
let behindMs = 0;
Date.now = () => realNow() - behindMs;
t.teardown(() => {
  Date.now = realNow;
});
const stepBack = () => {
  behindMs = 3_600_000;
};
t.afterEach(() => {
  behindMs = 0;
});

t.test('an open circuit breaker lets its trial call through after openMs, though the wall clock stepped back an hour', async () => {
  const breaker = createCircuitBreaker({ enabled: true, failureThreshold: 1, openMs: 20 }, { label: 'test' });
  breaker.failed(breaker.admit('GetClients'), new BackendError('unavailable', 'down'));
  assert.throws(() => breaker.admit('GetClients'), 'open at first');
  stepBack();
  await sleep(50);
  let ticket: unknown;
  try {
    ticket = breaker.admit('GetClients');
  } catch (error) {
    ticket = `refused, retry after ${(error as BackendError).retryAfterMs} ms`;
  }
  assert.deepEqual(ticket, { trial: true, epoch: 2 }, 'half-open after openMs: one trial call goes through');
});

t.test('a cached upstream answer is read again after its TTL, though the wall clock stepped back an hour', async () => {
  const cache = createAnswerCache<string>();
  let loads = 0;
  const load = async () => `answer ${(loads += 1)}`;
  assert.equal(await cache.fresh('GetProducts', 20, 'all', load), 'answer 1');
  stepBack();
  await sleep(50);
  assert.equal(await cache.fresh('GetProducts', 20, 'all', load), 'answer 2', 'the TTL is over: loaded again');
});
