/**
 * The v1 passthrough's trial forward under its request's deadline: it kept the forward's own
 * timeout, so the request carrying it waited past its deadline (up to `timeoutMs`, 15 s by default).
 * It now ends at the request's deadline. Cut there after waiting the whole deadline (past
 * SLOW_CUT_MS), it is a timeout: the breaker opens again, and a trial after the pause closes it.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, SERVICE } from './harness.js';

t.test('v1 passthrough: a trial forward ends at its request deadline', async (t) => {
  const gw = await buildPassthroughGateway({
    config: { requestDeadlineMs: 2_000 },
    v1: { timeoutMs: 5_000, circuitBreaker: { enabled: true, failureThreshold: 1, openMs: 300 } },
  });
  t.teardown(() => gw.close());
  const read = () => gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:all']) });

  gw.upstream.answer(json(503, { error: 'overloaded' }));
  assert.equal((await read()).statusCode, 503, 'the breaker opens');
  await sleep(350);
  // Answered 3 s in: past the request's deadline (2 s), within the forward's own timeout (5 s).
  gw.upstream.answer((request, response, socket) => setTimeout(() => json(200, SERVICE)(request, response, socket), 3_000));
  const trial = await read();
  assert.equal(trial.statusCode, 504, `the trial's request is answered at its deadline: ${trial.statusCode} ${trial.body}`);
  gw.upstream.answer(json(200, SERVICE));
  assert.equal((await read()).statusCode, 503, 'a trial that hung for its whole deadline opened the breaker again');
  await sleep(350);
  const next = await read();
  assert.equal(next.statusCode, 200, `after the pause, the next forward is the trial: ${next.body}`);
  assert.equal((await read()).statusCode, 200, 'its answer closed the breaker');
});
