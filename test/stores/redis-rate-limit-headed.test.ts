/**
 * The source address's window log in Redis is headed (src/stores/redis/lua/rate-limit.lua): a small
 * header key says when the log's TTL was last set and keeps the last refusal, so that a request far
 * from the limit is decided from the log's length after appending to it, and a flood is refused
 * from the header alone; the log itself is read only near its limit. These tests count the commands
 * Redis ran (INFO commandstats, scripts' own commands included) and read what the script left, on
 * a server of their own.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { Redis } from 'ioredis';
import { createRedisStores } from '../../src/stores/redis/index.js';
import type { Stores } from '../../src/stores/types.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';
import { readWindowLog, windowLog } from '../helpers/redis-log.js';
import { hitIp, unique } from './conformance.js';

const WINDOW_MS = 60_000;

let server: RedisServer;
let stores: Stores;
let inspector: Redis;
let keyPrefix: string;

t.before(async () => {
  server = await startRedisServer();
  keyPrefix = `${unique('headed')}:`;
  stores = await createRedisStores({ url: server.url, keyPrefix });
  inspector = new Redis(server.url);
});

t.teardown(async () => {
  inspector.disconnect();
  await stores.close();
  await server.stop();
});

const logKey = (ip: string) => `${keyPrefix}{ip:${ip}}:window`;
const headerKey = (ip: string) => `${logKey(ip)}:header`;

/** Calls of each command since the last reset (a script's own commands counted as well). */
async function commandCalls(): Promise<Record<string, number>> {
  const info = await inspector.info('commandstats');
  const calls: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)) calls[match[1] as string] = Number(match[2]);
  return calls;
}

/** The header's six doubles: [origin, rewritten, full_until, newest, limit, window_ms]. */
function header(origin: number, rewritten: number, fullUntil: number, newest: number, limit: number, windowMs: number): Buffer {
  const bytes = Buffer.alloc(48);
  [origin, rewritten, fullUntil, newest, limit, windowMs].forEach((value, index) => bytes.writeDoubleBE(value, index * 8));
  return bytes;
}

async function readHeader(ip: string): Promise<number[] | null> {
  const bytes = await inspector.getBuffer(headerKey(ip));
  return bytes && Array.from({ length: bytes.length / 8 }, (_, index) => bytes.readDoubleBE(index * 8));
}

/**
 * A delay the script computed ends at `target`. The script read Redis's clock (this host's) at some
 * instant between `before` and `after`; judged against that span, not against one later reading, a
 * slow host's lag between the decision and the test's next line is not taken for an error.
 */
function endsAt(before: number, after: number, delayMs: number, target: number, what: string): void {
  assert.ok(before + delayMs - 2 <= target && target <= after + delayMs + 2, `${what}: ${delayMs} ms from [${before}, ${after}] does not end at ${target}`);
}

t.test('far from its limit, a request is allowed from the log length after its append: the log is never read', async () => {
  const ip = '192.0.2.1';
  const policy = { limit: 50, windowMs: WINDOW_MS };
  assert.equal((await hitIp(stores.rateLimits, ip, policy)).allowed, true);
  const log = readWindowLog((await inspector.getBuffer(logKey(ip))) as Buffer);
  assert.deepEqual((await readHeader(ip))?.slice(0, 2).map((value, index) => (index === 0 ? value : Math.sign(value))), [log.origin, 1], 'the header has the log origin');

  await inspector.config('RESETSTAT');
  for (let sent = 2; sent <= 12; sent += 1) {
    const decision = await hitIp(stores.rateLimits, ip, policy);
    assert.equal(decision.allowed, true);
    assert.equal(decision.policies[0]?.remaining, 50 - sent, 'no entry has left the window: the count is exact');
  }
  const calls = await commandCalls();
  assert.equal(calls.get, undefined, 'the log was not read');
  assert.equal(calls.append, 11);
  assert.equal(calls.set, undefined, 'nothing else was written');
  const times = readWindowLog((await inspector.getBuffer(logKey(ip))) as Buffer).times;
  assert.equal(times.length, 12);
  assert.ok(times.every((time, index) => index === 0 || time >= (times[index - 1] as number)), 'in order');
});

t.test('at its limit the log is read and decided exactly; the refusal leaves the log as it was and is kept in the header, and the flood after it reads nothing', async () => {
  const ip = '192.0.2.2';
  const policy = { limit: 5, windowMs: WINDOW_MS };
  const started = Date.now();
  for (let sent = 0; sent < 5; sent += 1) assert.equal((await hitIp(stores.rateLimits, ip, policy)).allowed, true);
  const before = (await inspector.getBuffer(logKey(ip))) as Buffer;
  const ttlBefore = await inspector.pttl(logKey(ip));

  const refusedFrom = Date.now();
  const refused = await hitIp(stores.rateLimits, ip, policy);
  const refusedTo = Date.now();
  assert.equal(refused.allowed, false);
  assert.deepEqual(refused.violated, ['ip_minute']);
  assert.deepEqual(await inspector.getBuffer(logKey(ip)), before, 'the entry appended before the decision is gone');
  const ttlAfter = await inspector.pttl(logKey(ip));
  assert.ok(ttlAfter > 0 && ttlAfter <= ttlBefore, `TTL kept (${ttlBefore} → ${ttlAfter} ms)`);
  // Room again when the oldest of the five leaves.
  const oldest = readWindowLog(before).times[0] as number;
  const retry = refused.retryAfterMs as number;
  endsAt(refusedFrom, refusedTo, retry, oldest + WINDOW_MS, `retry after ${retry} ms`);
  const kept = (await readHeader(ip)) as number[];
  assert.deepEqual(kept.slice(2), [oldest + WINDOW_MS, readWindowLog(before).times[4] as number, 5, WINDOW_MS], 'full until the oldest leaves; the newest; the rule');

  await inspector.config('RESETSTAT');
  for (let sent = 0; sent < 20; sent += 1) {
    const from = Date.now();
    const again = await hitIp(stores.rateLimits, ip, policy);
    const to = Date.now();
    assert.equal(again.allowed, false);
    assert.equal(again.policies[0]?.remaining, 0);
    endsAt(from, to, again.retryAfterMs as number, oldest + WINDOW_MS, 'the same moment of room');
    const reset = again.policies[0]?.resetMs as number;
    endsAt(from, to, reset, (readWindowLog(before).times[4] as number) + WINDOW_MS, `reset in ${reset} ms: when the newest leaves`);
  }
  const calls = await commandCalls();
  assert.deepEqual([calls.get, calls.append, calls.set, calls.del], [undefined, undefined, undefined, undefined], 'refused from the header alone');
  assert.ok(Date.now() - started < 30_000);

  // Another limit is not refused from a header kept under this one.
  assert.equal((await hitIp(stores.rateLimits, ip, { limit: 6, windowMs: WINDOW_MS })).allowed, true);
});

t.test('once room is made, the next request is allowed, exactly when the window allows it', async () => {
  const ip = '192.0.2.3';
  const policy = { limit: 3, windowMs: 400 };
  for (let sent = 0; sent < 3; sent += 1) assert.equal((await hitIp(stores.rateLimits, ip, policy)).allowed, true);
  const refused = await hitIp(stores.rateLimits, ip, policy);
  assert.equal(refused.allowed, false);
  assert.equal((await hitIp(stores.rateLimits, ip, policy)).allowed, false, 'refused from the header');
  await new Promise((resolve) => setTimeout(resolve, (refused.retryAfterMs as number) + 5));
  assert.equal((await hitIp(stores.rateLimits, ip, policy)).allowed, true, 'room once the oldest left');
});

t.test('a request whose log has entries out of the window may report fewer remaining than it has, never more, and is allowed as the window allows', async () => {
  const ip = '192.0.2.4';
  const now = Date.now();
  const origin = now - 100_000;
  // Three entries 70 s old (out of a 60 s window), the log rewritten a second ago.
  await inspector.set(logKey(ip), windowLog(origin, 99_000, [30_000, 30_001, 30_002]), 'PX', 120_000);
  await inspector.set(headerKey(ip), header(origin, now - 1_000, 0, 0, 10, WINDOW_MS), 'PX', 59_000);
  await inspector.config('RESETSTAT');
  const decision = await hitIp(stores.rateLimits, ip, { limit: 10, windowMs: WINDOW_MS });
  assert.equal((await commandCalls()).get, undefined, 'decided from the length, the log not read');
  assert.equal(decision.allowed, true);
  const remaining = decision.policies[0]?.remaining as number;
  assert.ok(remaining >= 10 - 4 && remaining <= 10 - 1, `remaining ${remaining}: at most the exact 9`);
  // At the limit counted that way (3 + this one), the read decides: the three old entries do not count.
  const full = await hitIp(stores.rateLimits, ip, { limit: 4, windowMs: WINDOW_MS });
  assert.equal(full.allowed, true, 'one entry in the window, not four');
  assert.equal(full.policies[0]?.remaining, 2, 'counted exactly once read');
});

t.test('a header whose origin is not its log\'s is dropped when the log is read; the log decides', async () => {
  const ip = '192.0.2.5';
  const now = Date.now();
  const origin = now - 10_000;
  const log = windowLog(origin, 0, [1_000, 2_000, 3_000]);
  await inspector.set(logKey(ip), log, 'PX', 120_000);
  await inspector.set(headerKey(ip), header(origin - 5_000, now - 1_000, 0, 0, 3, WINDOW_MS), 'PX', 59_000);
  const refusedFrom = Date.now();
  const refused = await hitIp(stores.rateLimits, ip, { limit: 3, windowMs: WINDOW_MS });
  const refusedTo = Date.now();
  assert.equal(refused.allowed, false);
  assert.deepEqual(await inspector.getBuffer(logKey(ip)), log, 'the log as it was');
  assert.equal(await inspector.exists(headerKey(ip)), 0, 'the header dropped');
  endsAt(refusedFrom, refusedTo, refused.retryAfterMs as number, origin + 1_000 + WINDOW_MS, 'room when the oldest entry leaves');
});

t.test('a header whose log is gone (evicted) gets a new log, with its TTL, and a new header', async () => {
  const ip = '192.0.2.6';
  const now = Date.now();
  await inspector.set(headerKey(ip), header(now - 5_000, now - 1_000, 0, 0, 3, WINDOW_MS), 'PX', 59_000);
  assert.equal((await hitIp(stores.rateLimits, ip, { limit: 3, windowMs: WINDOW_MS })).allowed, true);
  const log = readWindowLog((await inspector.getBuffer(logKey(ip))) as Buffer);
  assert.equal(log.times.length, 1);
  assert.ok(log.origin >= now && log.origin <= Date.now() + 1);
  const ttl = await inspector.pttl(logKey(ip));
  assert.ok(ttl > WINDOW_MS && ttl <= 2 * WINDOW_MS, `TTL ${ttl} ms`);
  assert.equal((await readHeader(ip))?.[0], log.origin);
});

t.test('a header written under another window leaves the decision to the log read: its TTL was set for that window', async () => {
  const ip = '192.0.2.8';
  const now = Date.now();
  const origin = now - 10_000;
  await inspector.set(logKey(ip), windowLog(origin, 9_000, [5_000, 9_000]), 'PX', 60_000);
  await inspector.set(headerKey(ip), header(origin, now - 1_000, 0, 0, 10, 30_000), 'PX', 29_000);
  await inspector.config('RESETSTAT');
  const decision = await hitIp(stores.rateLimits, ip, { limit: 10, windowMs: WINDOW_MS });
  assert.equal(decision.allowed, true);
  assert.equal((await commandCalls()).get, 1, 'read');
  assert.equal(decision.policies[0]?.remaining, 7, 'two in the window, this request the third');
});

t.test('after the clock was set back past the last rewrite, the log is read and kept in order', async () => {
  const ip = '192.0.2.7';
  const now = Date.now();
  const origin = now - 10_000;
  // The newest entry 30 s ahead of the server's clock now, the header written then.
  await inspector.set(logKey(ip), windowLog(origin, 40_000, [5_000, 40_000]), 'PX', 120_000);
  await inspector.set(headerKey(ip), header(origin, now + 30_000, 0, 0, 10, WINDOW_MS), 'PX', 59_000);
  await inspector.config('RESETSTAT');
  assert.equal((await hitIp(stores.rateLimits, ip, { limit: 10, windowMs: WINDOW_MS })).allowed, true);
  assert.equal((await commandCalls()).get, 1, 'read');
  const times = readWindowLog((await inspector.getBuffer(logKey(ip))) as Buffer).times;
  assert.deepEqual(times, [origin + 5_000, origin + 40_000, origin + 40_000], 'the new entry at the newest time, not before it');
});
