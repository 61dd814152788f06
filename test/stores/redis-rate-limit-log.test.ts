/**
 * The Redis window log's search for the window's edge (src/stores/redis/lua/rate-limit.lua): crafted
 * logs of many shapes, each counted against the entries' own times. Traffic alone reaches few of
 * these shapes (a long prefix of entries already out of the window, bursts, an edge far from where
 * the oldest and newest times put it), and a search that miscounts them would admit too many
 * requests or refuse too early.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { Redis } from 'ioredis';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';
import { windowLog } from '../helpers/redis-log.js';
import { hitIp, unique } from './conformance.js';

const WINDOW_MS = 60_000;
/** No entry is this close to the window's edge: the edge moves while a check runs. */
const MARGIN_MS = 3_000;

let server: RedisServer;

t.before(async () => {
  server = await startRedisServer();
});

t.teardown(async () => {
  await server.stop();
});

/** A log to count: its entries' ages in ms before now, oldest first. */
interface Shape {
  name: string;
  ages: number[];
}

/** `count` ages spread evenly from `oldest` down to `newest` ms before now. */
function spread(count: number, oldest: number, newest: number): number[] {
  return Array.from({ length: count }, (_, index) => (count === 1 ? oldest : oldest - ((oldest - newest) * index) / (count - 1)));
}

/** `expired` entries older than the window, then `live` entries in it, each evenly spread. */
function split(expired: number, live: number): number[] {
  return [...spread(expired, 90_000, WINDOW_MS + MARGIN_MS), ...spread(live, WINDOW_MS - MARGIN_MS, 100)];
}

/** A deterministic generator (mulberry32), so that a failing shape can be run again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Entries in up to four bursts anywhere in the last 90 s, none within the margin of the edge. */
function randomShape(index: number): Shape {
  const next = random(index + 1);
  const bursts = Array.from({ length: 1 + Math.floor(next() * 4) }, () => ({ at: 100 + next() * 89_900, width: next() * 20_000 }));
  const ages = Array.from({ length: 2 + Math.floor(next() * 299) }, () => {
    const burst = bursts[Math.floor(next() * bursts.length)] as { at: number; width: number };
    return Math.min(90_000, Math.max(100, burst.at + (next() - 0.5) * burst.width));
  }).filter((age) => Math.abs(age - WINDOW_MS) > MARGIN_MS);
  return { name: `random ${index} (${ages.length} entries, ${bursts.length} bursts)`, ages: ages.sort((a, b) => b - a) };
}

const shapes: Shape[] = [
  { name: 'all in the window', ages: split(0, 200) },
  { name: 'all out of the window', ages: split(200, 0) },
  { name: 'one entry, in', ages: split(0, 1) },
  { name: 'one entry, out', ages: split(1, 0) },
  { name: 'two entries, one out', ages: split(1, 1) },
  ...[1, 2, 3, 4, 7, 8, 9, 16, 33, 84, 150, 198, 199].map((expired) => ({ name: `${expired} of 200 out`, ages: split(expired, 200 - expired) })),
  // The edge far from where the oldest and newest times put it, both ways.
  { name: 'out clustered at the oldest, in spread', ages: [...spread(190, 90_000, 89_900), ...spread(10, WINDOW_MS - MARGIN_MS, 100)] },
  { name: 'out spread, in clustered at the newest', ages: [...spread(10, 90_000, WINDOW_MS + MARGIN_MS), ...spread(190, 200, 100)] },
  { name: 'out clustered at the edge, in clustered at the newest', ages: [...spread(150, WINDOW_MS + MARGIN_MS + 10, WINDOW_MS + MARGIN_MS), ...spread(50, 200, 100)] },
  ...Array.from({ length: 40 }, (_, index) => randomShape(index)),
];

t.test('the window log counts exactly the entries inside the window, whatever its shape', async (t) => {
  const keyPrefix = `${unique('log')}:`;
  const stores = await createRedisStores({ url: server.url, keyPrefix });
  const inspector = new Redis(server.url);
  t.teardown(async () => {
    inspector.disconnect();
    await stores.close();
  });

  for (const [index, shape] of shapes.entries()) {
    const ip = `192.0.2.${index}`;
    const now = Date.now();
    const origin = now - 100_000;
    const times = shape.ages.map((age) => Math.round(now - age));
    const inWindow = times.filter((time) => time > now - WINDOW_MS);
    await inspector.set(`${keyPrefix}{ip:${ip}}:window`, windowLog(origin, now - origin - 1_000, times.map((time) => time - origin)), 'PX', 120_000);
    const count = inWindow.length;

    // Full (nothing written): room again when the entry `limit` places from the newest leaves.
    for (const limit of [count, count - 3].filter((limit) => limit > 0)) {
      const refused = await hitIp(stores.rateLimits, ip, { limit, windowMs: WINDOW_MS });
      const elapsed = Date.now() - now;
      assert.ok(elapsed < MARGIN_MS, `${shape.name}: the check took ${elapsed} ms`);
      assert.equal(refused.allowed, false, `${shape.name}: refused at a limit of ${limit}`);
      const leaving = (inWindow[count - limit] as number) + WINDOW_MS - now;
      const retryAfter = refused.retryAfterMs as number;
      assert.ok(retryAfter >= leaving - elapsed - 2 && retryAfter <= leaving + 2, `${shape.name}, limit ${limit}: retry after ${retryAfter} ms, the entry leaves in ${leaving}`);
      const reset = refused.policies[0]?.resetMs as number;
      const newest = (inWindow[count - 1] as number) + WINDOW_MS - now;
      assert.ok(reset >= newest - elapsed - 2 && reset <= newest + 2, `${shape.name}, limit ${limit}: reset in ${reset} ms, the newest leaves in ${newest}`);
    }

    const admitted = await hitIp(stores.rateLimits, ip, { limit: 1_000, windowMs: WINDOW_MS });
    assert.ok(Date.now() - now < MARGIN_MS, `${shape.name}: the check took ${Date.now() - now} ms`);
    assert.equal(admitted.allowed, true, shape.name);
    assert.equal(admitted.policies[0]?.remaining, 1_000 - count - 1, `${shape.name}: ${count} entries in the window, this request the next`);
  }
  t.pass(`${shapes.length} shapes counted`);
});
