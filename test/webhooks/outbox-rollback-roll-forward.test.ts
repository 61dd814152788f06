/**
 * A rollback to the release before the waiting line (d3de8f6): its instances never read
 * `{webhooks}:parked`, so the events waiting there stay while it runs, and it finishes the
 * account's admitted entries without admitting the next. Started again, this release must deliver
 * them, in order, without a new event or delivery of that account to set them moving.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { Redis } from 'ioredis';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { unique } from '../stores/conformance.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';

let server: RedisServer;
t.before(async () => {
  server = await startRedisServer();
});
t.teardown(() => server.stop());

/** webhook-complete.lua as d3de8f6 has it. */
const OLD_COMPLETE = `
if #redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1, ARGV[3]) == 0 then return 0 end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[4])
return 1`;

const entry = (eventId: string) => ({ eventId, accountId: 'acme', body: '{}', trace: {} });
const SWEEP_MS = 200;

t.test('events left waiting by a rollback are delivered once this release runs again', async () => {
  const prefix = `${unique('rollback')}:`;
  const admission = { perAccount: 2, maxWaiting: 10_000, sweepAfterMs: SWEEP_MS };
  const before = await createRedisStores({ url: server.url, keyPrefix: prefix, webhookAdmission: admission });
  for (const id of ['evt_1', 'evt_2', 'evt_3', 'evt_4']) await before.webhookOutbox.enqueue(entry(id));
  await before.close();

  // The previous release: reads the stream as its group's consumer and finishes what it read.
  const old = new Redis(server.url);
  await old.xgroup('CREATE', `${prefix}{webhooks}:outbox`, 'deliverers', '0', 'MKSTREAM');
  const read = (await old.xreadgroup('GROUP', 'deliverers', 'old-worker', 'COUNT', 10, 'STREAMS', `${prefix}{webhooks}:outbox`, '>')) as Array<[string, Array<[string, string[]]>]>;
  const ids = read[0]![1].map(([id]) => id);
  assert.equal(ids.length, 2, 'the share was in the stream');
  for (const [index, id] of ids.entries()) {
    await old.eval(OLD_COMPLETE, 2, `${prefix}{webhooks}:outbox`, `${prefix}{webhooks}:pending`, 'deliverers', id, 'old-worker', `evt_${index + 1}`);
  }
  old.disconnect();
  await new Promise((resolve) => setTimeout(resolve, SWEEP_MS + 50));

  const after = await createRedisStores({ url: server.url, keyPrefix: prefix, webhookAdmission: admission });
  try {
    const claimed = await after.webhookOutbox.claim('new-worker', 10, 30_000);
    assert.deepEqual(claimed.map((d) => d.eventId), ['evt_3', 'evt_4'], 'swept in at the first claim, in order');
    for (const delivery of claimed) await after.webhookOutbox.complete(delivery, 'delivered');
    assert.deepEqual(await after.webhookOutbox.backlog(), { depth: 0, oldestAgeMs: 0 });
  } finally {
    await after.close();
  }
});
