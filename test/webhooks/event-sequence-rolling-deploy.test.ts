/**
 * A rolling deploy: an instance of the previous release enqueues with its own script, which numbers
 * nothing. Its events go out without `sequence`; the numbers this release gives stay per account,
 * one apart, with no gap for the unnumbered ones (a receiver would take one for a lost event).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
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

/** webhook-enqueue.lua as the previous release has it, behind the shared outbox-line.lua. */
const OLD_ENQUEUE = `${readFileSync(new URL('../../src/stores/redis/lua/outbox-line.lua', import.meta.url), 'utf8')}
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
local account = ARGV[3]
local waiting = parkedHead(KEYS[3], account) ~= nil
local live = waiting and {} or liveIds(KEYS[1], KEYS[4], account)
local admitted = not waiting and #live < tonumber(ARGV[4])
if not admitted and parkedCount(KEYS[3], account) >= tonumber(ARGV[6]) then return 2 end
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local seq = redis.call('INCR', KEYS[6])
if admitted then
  live[#live + 1] = redis.call('XADD', KEYS[1], '*', 'e', ARGV[2], 's', seq)
  redis.call('HSET', KEYS[4], account, table.concat(live, ' '))
else
  redis.call('ZADD', KEYS[3], 0, parkedMember(account, seq, ARGV[2]))
  redis.call('ZADD', KEYS[5], 'NX', nowMs + tonumber(ARGV[5]), account)
end
redis.call('ZADD', KEYS[2], nowMs, ARGV[1])
return 1`;

t.test('events the previous release enqueues carry no number and take none', async () => {
  const prefix = `${unique('rolling-seq')}:`;
  const stores = await createRedisStores({ url: server.url, keyPrefix: prefix, webhookAdmission: { perAccount: 10, maxWaiting: 10_000, sweepAfterMs: 30_000 } });
  const old = new Redis(server.url);
  try {
    const outbox = stores.webhookOutbox;
    const event = (eventId: string) => ({ eventId, accountId: 'acme', body: `{"id":"${eventId}"}`, trace: {} });
    await outbox.enqueue({ ...event('evt_1'), numbered: true });
    const keys = ['outbox', 'pending', 'parked', 'in-stream', 'parked-accounts', 'seq'].map((name) => `${prefix}{webhooks}:${name}`);
    const oldValue = JSON.stringify({ ...event('evt_2'), attempts: 0 });
    assert.equal(await old.eval(OLD_ENQUEUE, keys.length, ...keys, 'evt_2', oldValue, 'acme', 10, 30_000, 10_000), 1);
    await outbox.enqueue({ ...event('evt_3'), numbered: true });
    const claimed = await outbox.claim('worker', 10, 30_000);
    assert.deepEqual(
      claimed.map((delivery) => delivery.body),
      ['{"id":"evt_1","sequence":1}', '{"id":"evt_2"}', '{"id":"evt_3","sequence":2}'],
      "the previous release's event goes out as it made it; the numbers run on without a gap",
    );
  } finally {
    old.disconnect();
    await stores.close();
  }
});
