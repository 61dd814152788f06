/**
 * A Redis that keeps its connections open but answers nothing (frozen): every call is cut off by
 * its timeout, but ioredis keeps each timed-out command queued (a reply may still come). Without a
 * bound, every request of the freeze added to that queue (and to the socket's buffer) for as long as
 * it lasted; the commands unanswered stay at most MOST_UNANSWERED_COMMANDS, the rest fail at once.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import type { Redis } from 'ioredis';
import { createRedisStores, type RedisConnection } from '../../src/stores/redis/index.js';
import { StoreUnavailableError } from '../../src/stores/types.js';
import { startRedisServer } from '../helpers/redis.js';
import { hitIp } from '../stores/conformance.js';

/** The bound src/stores/redis/connection.ts keeps (MOST_UNANSWERED_COMMANDS). */
const MOST_UNANSWERED_COMMANDS = 10_000;

t.test('a frozen Redis: the commands left unanswered stay bounded, and calls past the bound fail at once', async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const stores = await createRedisStores({ url: redis.url });
  const client = (stores.rateLimits as unknown as { redis: RedisConnection }).redis.client as Redis;
  redis.pause();
  t.teardown(async () => {
    redis.resume();
    await stores.close();
  });
  const calls = MOST_UNANSWERED_COMMANDS + 5_000;
  const failures: Array<Promise<unknown>> = [];
  for (let i = 0; i < calls; i += 1) {
    // Rate-limit decisions (the per-request call) and key reads, each from another source.
    const call = i % 2 === 0 ? hitIp(stores.rateLimits, `10.0.${(i >> 8) & 255}.${i & 255}`, { limit: 100, windowMs: 60_000 }) : stores.keys.getKeyWithAccount(i.toString(16).padStart(16, '0'));
    failures.push(call.then(() => assert.fail('a frozen Redis answered'), (error: unknown) => assert.ok(error instanceof StoreUnavailableError, String(error))));
  }
  t.ok(client.commandQueue.length <= MOST_UNANSWERED_COMMANDS, `unanswered commands ${client.commandQueue.length} ≤ ${MOST_UNANSWERED_COMMANDS}`);
  await Promise.all(failures);
  t.ok(client.commandQueue.length <= MOST_UNANSWERED_COMMANDS, `after the timeouts: ${client.commandQueue.length} unanswered`);
});
