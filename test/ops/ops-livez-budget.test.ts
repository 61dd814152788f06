/**
 * With WORKERS above 1 the primary's /livez asks every listening worker; it waited up to 2 s for
 * an answer, twice a Kubernetes probe's default timeout (1 s): a probe of an instance with a stuck
 * worker timed out before the gateway answered 503 `worker_unresponsive`, and one with a slow
 * worker failed where the gateway would have said 200. Its answer now comes within 1 s: a worker
 * silent for the whole budget counts as unresponsive. Timers are mocked: no real waiting.
 */
import assert from 'node:assert/strict';
import type { Worker } from 'node:cluster';
import { EventEmitter } from 'node:events';
import { mock } from 'node:test';
import t from 'tap';
import { workersAlive } from '../../src/worker-questions.js';

/** A worker that answers the liveness question after `answerAfterMs` of (mocked) time, or never. */
function worker(answerAfterMs: number | undefined): Worker {
  const fake = new EventEmitter() as EventEmitter & { send(message: { type: string; id: number }): boolean };
  fake.send = (message) => {
    if (answerAfterMs !== undefined) setTimeout(() => fake.emit('message', { type: 'gateway:alive', id: message.id }), answerAfterMs);
    return true;
  };
  return fake as unknown as Worker;
}

/** Lets the promise callbacks of the ticked timers run. */
const settle = async (): Promise<void> => {
  for (let index = 0; index < 5; index += 1) await Promise.resolve();
};

t.afterEach(() => mock.timers.reset());

t.test('a silent worker makes /livez report unresponsive within 1 s, whoever else answers', async () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  let alive: boolean | undefined;
  void workersAlive([worker(1), worker(undefined)]).then((answer) => (alive = answer));
  mock.timers.tick(999);
  await settle();
  assert.equal(alive, false, 'answered unresponsive before a 1 s probe timeout');
});

t.test('workers that answer in a busy moment (well below 1 s) are alive', async () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  let alive: boolean | undefined;
  void workersAlive([worker(1), worker(600)]).then((answer) => (alive = answer));
  mock.timers.tick(600);
  await settle();
  assert.equal(alive, true);
});
