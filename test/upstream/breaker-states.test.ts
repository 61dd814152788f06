/**
 * The circuit breaker's states, on an injected clock: what callers meet (a call let through or
 * refused with Retry-After) after each kind of report. Mutations of breaker.ts that these catch (an
 * answer not resetting the count, a stale call's report counted, two trials at once, a failed trial
 * not re-opening, half-open taken for closed, a cut trial keeping the others out) passed the
 * upstream tests.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { BackendError } from '../../src/backend/backend.js';
import { CircuitOpenError, createCircuitBreaker, TRIAL_RETRY_AFTER_MS } from '../../src/upstream/breaker.js';

const down = new BackendError('timeout', 'down');

function breakerAt(failureThreshold: number) {
  const clock = { ms: 0 };
  const breaker = createCircuitBreaker({ enabled: true, failureThreshold, openMs: 10_000 }, { label: 'Test', now: () => clock.ms });
  return { breaker, clock };
}

/** The Retry-After (ms) the breaker refuses a call with, or `admitted`. */
function refusal(breaker: ReturnType<typeof breakerAt>['breaker']): number | 'admitted' {
  try {
    breaker.admit('GetClients');
    return 'admitted';
  } catch (error) {
    assert.ok(error instanceof CircuitOpenError);
    return error.retryAfterMs as number;
  }
}

t.test('it opens at exactly failureThreshold consecutive down-signals, and an answer between starts the count again', async () => {
  const { breaker } = breakerAt(3);
  breaker.failed(breaker.admit('a'), down);
  breaker.failed(breaker.admit('a'), down);
  breaker.answered(breaker.admit('a'));
  breaker.failed(breaker.admit('a'), down);
  breaker.failed(breaker.admit('a'), down);
  assert.equal(refusal(breaker), 'admitted', 'two down-signals since the last answer: still closed');
  breaker.failed(breaker.admit('a'), down);
  assert.equal(refusal(breaker), 10_000, 'the third in a row opens it for openMs');
  assert.equal(breaker.isClosed(), false);
});

t.test('a call admitted before the breaker opened tells nothing after', async () => {
  const { breaker, clock } = breakerAt(1);
  const early = breaker.admit('a');
  const late = breaker.admit('a');
  breaker.failed(breaker.admit('a'), down);
  breaker.answered(early);
  assert.equal(refusal(breaker), 10_000, "an earlier call's answer does not close it");
  clock.ms = 10_000;
  const trial = breaker.admit('a');
  breaker.failed(late, down);
  breaker.answered(trial);
  assert.equal(breaker.isClosed(), true, "an earlier call's down-signal does not re-open it over the trial");
});

t.test('a call admitted before the breaker opened does not re-open it once it has closed again', async () => {
  const { breaker, clock } = breakerAt(1);
  const early = breaker.admit('a');
  breaker.failed(breaker.admit('a'), down);
  clock.ms = 10_000;
  breaker.answered(breaker.admit('a'));
  breaker.failed(early, down);
  assert.equal(refusal(breaker), 'admitted', 'closed: the down-signal of a call from before is not counted');
});

t.test('half-open: one trial at a time; its answer closes, its down-signal re-opens for openMs', async () => {
  const { breaker, clock } = breakerAt(1);
  breaker.failed(breaker.admit('a'), down);
  clock.ms = 9_999;
  assert.equal(refusal(breaker), 1, 'refused until openMs is over');
  clock.ms = 10_000;
  const trial = breaker.admit('a');
  assert.equal(trial.trial, true);
  assert.equal(breaker.isClosed(), false, 'half-open is not closed');
  assert.equal(refusal(breaker), TRIAL_RETRY_AFTER_MS, 'a second call waits for the trial');
  breaker.failed(trial, down);
  assert.equal(refusal(breaker), 10_000, 'the failed trial re-opens it');
  clock.ms = 20_000;
  breaker.answered(breaker.admit('a'));
  assert.equal(breaker.isClosed(), true);
  assert.equal(breaker.admit('a').trial, false);
});

t.test('a trial cut by its request deadline neither closes nor re-opens: the next call is the trial', async () => {
  const { breaker, clock } = breakerAt(1);
  breaker.failed(breaker.admit('a'), down);
  clock.ms = 10_000;
  const cut = breaker.admit('a');
  breaker.abandoned(cut);
  assert.equal(breaker.isClosed(), false, 'not closed');
  const next = breaker.admit('a');
  assert.equal(next.trial, true, 'the next call is the trial at once');
  assert.equal(refusal(breaker), TRIAL_RETRY_AFTER_MS, 'one trial at a time still');
  breaker.answered(cut);
  assert.equal(breaker.isClosed(), false, 'the cut trial tells nothing after');
  breaker.answered(next);
  assert.equal(breaker.isClosed(), true);
});

t.test('a call cut by its request deadline while closed leaves the count as it was', async () => {
  const { breaker } = breakerAt(2);
  breaker.failed(breaker.admit('a'), down);
  breaker.abandoned(breaker.admit('a'));
  breaker.failed(breaker.admit('a'), down);
  assert.equal(refusal(breaker), 10_000, 'the cut neither reset nor added to the count');
});
