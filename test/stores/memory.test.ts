import assert from 'node:assert/strict';
import t from 'tap';
import {
  MemoryIdempotencyStore,
  MemoryKeyStore,
  MemoryRateLimitStore,
  MemoryWebhookOutbox,
  MemoryWebhookStore,
  createMemoryStores,
} from '../../src/stores/memory/index.js';
import { type KeyLimitRequest, type RateLimitStore, StoreUnavailableError } from '../../src/stores/types.js';
import { bearer, buildTestGateway } from '../helpers/gateway.js';
import { IdempotencyConfigSchema } from '../../src/config.js';
import {
  ManualClock,
  runIdempotencyConformance,
  runKeyStoreConformance,
  runRateLimitConformance,
  runWebhookConformance,
  hitIp,
  hitKey,
} from './conformance.js';
import type { FixtureFactory } from './conformance.js';
import { runOutboxConformance, runWebhookStateConformance, WAITING_BOUND } from './webhook-conformance.js';

function memoryFixture<S>(create: (clock: ManualClock) => S): FixtureFactory<S> {
  return async () => {
    const clock = new ManualClock();
    return { store: create(clock), clock, close: async () => undefined };
  };
}

runRateLimitConformance(t, 'memory', memoryFixture((clock) => new MemoryRateLimitStore({ now: clock.now })));
runIdempotencyConformance(t, 'memory', memoryFixture((clock) => new MemoryIdempotencyStore({ now: clock.now })));
runKeyStoreConformance(t, 'memory', memoryFixture(() => new MemoryKeyStore()));
runWebhookConformance(t, 'memory', memoryFixture(() => new MemoryWebhookStore()));
runWebhookStateConformance(t, 'memory', memoryFixture((clock) => new MemoryWebhookStore(clock.now)));
runOutboxConformance(t, 'memory', memoryFixture((clock) => new MemoryWebhookOutbox(clock.now, { perAccount: 2, maxWaiting: WAITING_BOUND })));

/** The most requests allowed within any `windowMs` (half-open windows starting at an allowed request). */
function busiestWindow(allowedAt: number[], windowMs: number): number {
  let busiest = 0;
  let start = 0;
  for (let end = 0; end < allowedAt.length; end += 1) {
    while ((allowedAt[end] as number) - (allowedAt[start] as number) >= windowMs) start += 1;
    busiest = Math.max(busiest, end - start + 1);
  }
  return busiest;
}

/** A client that sends whenever it may: bursts until refused, then comes back exactly at Retry-After. */
async function greedyClient(store: RateLimitStore, clock: ManualClock, request: KeyLimitRequest, durationMs: number): Promise<number[]> {
  const allowedAt: number[] = [];
  const end = clock.now() + durationMs;
  while (clock.now() < end) {
    const decision = await hitKey(store, request);
    if (decision.allowed) allowedAt.push(clock.now());
    else await clock.advance(decision.retryAfterMs ?? 1);
  }
  return allowedAt;
}

/** A client that mostly sends every few ms and sometimes pauses for up to 30 s (seeded, repeatable). */
async function randomClient(store: RateLimitStore, clock: ManualClock, request: KeyLimitRequest, durationMs: number): Promise<number[]> {
  let seed = 42;
  const random = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const allowedAt: number[] = [];
  const end = clock.now() + durationMs;
  while (clock.now() < end) {
    if ((await hitKey(store, request)).allowed) allowedAt.push(clock.now());
    await clock.advance(random() < 0.95 ? Math.floor(random() * 50) : Math.floor(random() * 30_000));
  }
  return allowedAt;
}

t.test('memory: rate-limit properties over minutes of simulated time', async (t) => {
  const keyRequest = (ratePerMinute: number, burst: number): KeyLimitRequest => ({
    accountId: 'acct',
    keyId: 'key',
    perMinute: { ratePerMinute, burst },
    perDay: 1_000_000,
    accountPerMinute: null,
  });

  t.test('GCRA 60/min + 20: a greedy client never gets more than 80 in any 60 s, and does get 80', async () => {
    const clock = new ManualClock();
    const store = new MemoryRateLimitStore({ now: clock.now });
    const allowedAt = await greedyClient(store, clock, keyRequest(60, 20), 5 * 60_000);
    assert.equal(busiestWindow(allowedAt, 60_000), 80);
    assert.equal(allowedAt.filter((time) => time === allowedAt[0]).length, 21, '21 at once from rest');
  });

  t.test('GCRA with an inexact interval (7/min + 3): never more than 10 in any 60 s', async () => {
    const clock = new ManualClock();
    const store = new MemoryRateLimitStore({ now: clock.now });
    const allowedAt = await greedyClient(store, clock, keyRequest(7, 3), 10 * 60_000);
    assert.equal(busiestWindow(allowedAt, 60_000), 10);
  });

  t.test('GCRA holds for a client with random pauses', async () => {
    const clock = new ManualClock();
    const store = new MemoryRateLimitStore({ now: clock.now });
    const allowedAt = await randomClient(store, clock, keyRequest(60, 20), 10 * 60_000);
    assert.ok(busiestWindow(allowedAt, 60_000) <= 80, `${busiestWindow(allowedAt, 60_000)} in one window`);
  });

  t.test('the account window holds for a client with random pauses', async () => {
    const clock = new ManualClock();
    const store = new MemoryRateLimitStore({ now: clock.now });
    const request = { ...keyRequest(60, 20), accountPerMinute: { limit: 50, windowMs: 60_000 } };
    const allowedAt = await randomClient(store, clock, request, 10 * 60_000);
    assert.equal(busiestWindow(allowedAt, 60_000), 50);
  });

  t.test('the day counter starts again at UTC midnight', async () => {
    const clock = new ManualClock(Date.UTC(2026, 2, 10, 23, 59, 59));
    const store = new MemoryRateLimitStore({ now: clock.now });
    const request = { ...keyRequest(1_000, 1_000), perDay: 2 };
    await hitKey(store, request);
    await hitKey(store, request);
    const refused = await hitKey(store, request);
    assert.deepEqual(refused.violated, ['key_day']);
    assert.equal(refused.retryAfterMs, 1_000);

    await clock.advance(1_000);
    const nextDay = await hitKey(store, request);
    assert.equal(nextDay.allowed, true);
    assert.equal(nextDay.policies.find((state) => state.name === 'key_day')?.remaining, 1);
  });

  t.test('memory is bounded: past maxCounters the least recently used counter is dropped', async () => {
    const clock = new ManualClock();
    const store = new MemoryRateLimitStore({ now: clock.now, maxCounters: 2 });
    const policy = { limit: 1, windowMs: 60_000 };
    await hitIp(store, '192.0.2.1', policy);
    assert.equal((await hitIp(store, '192.0.2.1', policy)).allowed, false);
    await hitIp(store, '192.0.2.2', policy);
    await hitIp(store, '192.0.2.3', policy);
    assert.equal((await hitIp(store, '192.0.2.1', policy)).allowed, true, 'its counter was evicted');
  });

  t.test('requests from many addresses never push a key\'s counter out: its day limit holds', async () => {
    const clock = new ManualClock(Date.UTC(2026, 2, 10, 12));
    const store = new MemoryRateLimitStore({ now: clock.now, maxCounters: 2 });
    const request = { ...keyRequest(1_000, 1_000), perDay: 1 };
    await hitKey(store, request);
    assert.deepEqual((await hitKey(store, request)).violated, ['key_day']);
    for (let address = 1; address <= 5; address += 1) await hitIp(store, `192.0.2.${address}`, { limit: 10, windowMs: 60_000 });
    assert.deepEqual((await hitKey(store, request)).violated, ['key_day'], 'the key\'s day counter is still there');
  });
});

t.test('memory: idempotency bound', async (t) => {
  const request = (key: string) => ({
    accountId: 'acct',
    key,
    fingerprint: 'f',
    endpoint: 'POST /v1/orders',
    leaseMs: 60_000,
    settleMs: 60_000,
    retentionMs: 60_000,
    staleAfterMs: null,
  });

  t.test('holds at most maxRecords live records and forgets none before it expires: a new key is refused instead', async () => {
    const clock = new ManualClock();
    const store = new MemoryIdempotencyStore({ now: clock.now, maxRecords: 2 });
    // Each key its own account: one account holds at most a quarter (the next test).
    const keyed = (key: string) => ({ ...request(key), accountId: `acct-${key}` });
    for (const key of ['a', 'b']) assert.equal((await store.begin(keyed(key))).kind, 'acquired');
    await assert.rejects(store.begin(keyed('c')), (error: Error) => error instanceof StoreUnavailableError && /maximum of 2 live records/.test(error.message));
    assert.equal((await store.begin(keyed('a'))).kind, 'in_progress', 'the oldest is still held');
    await clock.advance(60_001);
    assert.equal((await store.begin(keyed('c'))).kind, 'acquired', 'expired records make room');
  });

  t.test('one account holds at most a quarter of maxRecords: its keys cannot refuse the others\'', async () => {
    const clock = new ManualClock();
    const store = new MemoryIdempotencyStore({ now: clock.now, maxRecords: 8 });
    const of = (accountId: string, key: string) => ({ ...request(key), accountId });
    for (const key of ['a', 'b']) assert.equal((await store.begin(of('greedy', key))).kind, 'acquired');
    await assert.rejects(store.begin(of('greedy', 'c')), (error: Error) => error instanceof StoreUnavailableError && /account greedy holds its share .* 2 live records/.test(error.message));
    for (const key of ['a', 'b']) assert.equal((await store.begin(of('other', key))).kind, 'acquired', 'another account is not refused');
    assert.equal((await store.begin(of('greedy', 'a'))).kind, 'in_progress', 'its own records are kept');
    // A record released before anything was sent frees its place, and so do expired ones.
    const third = await store.begin(of('third', 'x'));
    assert.equal(third.kind, 'acquired');
    await store.begin(of('third', 'y'));
    await assert.rejects(store.begin(of('third', 'z')), StoreUnavailableError);
    await store.release({ accountId: 'third', key: 'x' }, (third as { token: string }).token);
    assert.equal((await store.begin(of('third', 'z'))).kind, 'acquired');
    await clock.advance(60_001);
    assert.equal((await store.begin(of('greedy', 'c'))).kind, 'acquired', 'expired records make room');
  });

  t.test('through the gateway: a new key past the bound answers 503 store_unavailable and sends nothing', async (t) => {
    const { memoryMaxRecords } = IdempotencyConfigSchema.parse({ memoryMaxRecords: 1 });
    const gw = await buildTestGateway({ stores: createMemoryStores({ idempotencyMaxRecords: memoryMaxRecords }) });
    t.teardown(() => gw.close());
    const order = (key: string) =>
      gw.app.inject({
        method: 'POST',
        url: '/v1/orders',
        headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json', 'idempotency-key': key },
        payload: JSON.stringify({ product_id: '1', billing_cycle: 'monthly' }),
      });
    assert.equal((await order('first')).statusCode, 201);
    const orders = gw.simulator.state.orders.length;
    const refused = await order('second');
    assert.equal(refused.statusCode, 503, refused.body);
    assert.equal(refused.json().reason, 'store_unavailable');
    assert.equal(gw.simulator.state.orders.length, orders, 'nothing was sent');
    assert.equal((await order('first')).headers['idempotent-replayed'], 'true');
  });
});

t.test('memory: createMemoryStores', async (t) => {
  t.test('returns the memory stores, always healthy', async () => {
    const stores = createMemoryStores();
    assert.equal(stores.kind, 'memory');
    assert.ok(stores.keys instanceof MemoryKeyStore);
    assert.equal(await stores.ping(), true);
    await stores.close();
  });
});
