/**
 * The cluster primary's crash-loop policy (src/startup/worker-deaths.ts) on a still clock: the delay
 * doubles with each round of deaths (the workers' count), the fourth round gives up, and a death a
 * minute or more after the last one starts counting anew, however often it happens.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { WorkerDeaths } from '../../src/startup/worker-deaths.js';

t.test('two workers dying in a row: 1, 1, 2, 2, 4, 4 s, then give up', async () => {
  let now = 0;
  const deaths = new WorkerDeaths(2, () => now);
  const seen = [];
  for (let index = 0; index < 7; index += 1) {
    seen.push(deaths.note());
    now += 5_000;
  }
  assert.deepEqual(seen, [...[1, 1, 2, 2, 4, 4].map((seconds) => ({ respawnInMs: seconds * 1_000 })), { giveUp: true, deaths: 7 }]);
});

t.test('a death a minute after the last is replaced after a second, however many came before', async () => {
  let now = 0;
  const deaths = new WorkerDeaths(1, () => now);
  for (let index = 0; index < 20; index += 1) {
    assert.deepEqual(deaths.note(), { respawnInMs: 1_000 });
    now += 60_000;
  }
});
