/**
 * A rolling deploy: an instance of the previous release (d3de8f6) delivers from the same outbox as
 * this one. Its scripts know nothing of the per-account admission line: it completes (or puts back)
 * entries this release admitted without saying so. The account's next event must still be
 * admitted as this release's next delivery of it ends, not parked until a sweep (claimIdleMs
 * later, and never while the account's other deliveries keep ending): the account must not be
 * left held back by entries that are gone.
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

/** webhook-reschedule.lua as d3de8f6 has it (its release: attempts unchanged). */
const OLD_RESCHEDULE = `
if #redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1, ARGV[5]) == 0 then return 0 end
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], nowMs + tonumber(ARGV[4]), ARGV[3])
return 1`;

const entry = (eventId: string) => ({ eventId, accountId: 'acme', body: '{}', trace: {} });

t.test("an account's entries finished by a previous-release instance do not hold its next events back", async () => {
  const prefix = `${unique('rolling')}:`;
  const stores = await createRedisStores({ url: server.url, keyPrefix: prefix, webhookAdmission: { perAccount: 2, maxWaiting: 10_000, sweepAfterMs: 30_000 } });
  const old = new Redis(server.url);
  try {
    const outbox = stores.webhookOutbox;
    for (const id of ['evt_1', 'evt_2', 'evt_3']) await outbox.enqueue(entry(id));
    // The previous release's worker claims what it reads (the same XREADGROUP) and finishes it its own way.
    const claimed = await outbox.claim('old-worker', 10, 30_000);
    assert.deepEqual(claimed.map((d) => d.eventId), ['evt_1', 'evt_2']);
    const [first, second] = claimed as [(typeof claimed)[0], (typeof claimed)[0]];
    const streamId = (handle: string) => handle.slice(0, handle.indexOf(' '));
    await old.eval(OLD_COMPLETE, 2, `${prefix}{webhooks}:outbox`, `${prefix}{webhooks}:pending`, 'deliverers', streamId(first.handle), 'old-worker', first.eventId);
    // Put back for one interval (its surplus), due at once here.
    const putBack = JSON.stringify({ eventId: second.eventId, accountId: 'acme', body: '{}', trace: {}, attempts: 0 });
    await old.eval(OLD_RESCHEDULE, 2, `${prefix}{webhooks}:outbox`, `${prefix}{webhooks}:retry`, 'deliverers', streamId(second.handle), putBack, 0, 'old-worker');
    // This release's worker: evt_2 is due again; as it ends, the account has nothing in the stream.
    const retried = await outbox.claim('new-worker', 10, 30_000);
    assert.deepEqual(retried.map((d) => d.eventId), ['evt_2']);
    await outbox.complete(retried[0]!, 'delivered');
    assert.deepEqual((await outbox.claim('new-worker', 10, 30_000)).map((d) => d.eventId), ['evt_3'], 'admitted as its delivery ends, not after a sweep');
    await outbox.enqueue(entry('evt_4'));
    assert.deepEqual((await outbox.claim('new-worker', 10, 30_000)).map((d) => d.eventId), ['evt_4'], 'its share is two: evt_3 and evt_4');
  } finally {
    old.disconnect();
    await stores.close();
  }
});
