/**
 * The behaviour every store implementation must have (contract §4 and §5), as one suite per
 * interface. Memory runs it on an injected clock (time passes instantly); Redis reads the server's
 * clock, so the time-dependent cases use sub-second policies and short sleeps. Both kinds of
 * clock pass the same assertions: bounds, never exact instants.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import type {
  AccountRecord,
  ApiKeyRecord,
  BeginRequest,
  BeginResult,
  IdempotencyStore,
  KeyLimitRequest,
  KeyStore,
  PolicyName,
  PolicyState,
  RateDecision,
  RateLimitStore,
  StoredResponse,
  WindowPolicy,
} from '../../src/stores/types.js';
import type { WebhookRecord, WebhookStore } from '../../src/stores/webhook-types.js';
import { KeyService } from '../../src/keys/key-service.js';
import { ipGroup, keyGroup } from '../../src/stores/rate-policies.js';
import { runAccountDeleteConformance } from './account-delete-conformance.js';
import { runUpstreamClaimConformance } from './upstream-claim-conformance.js';

export interface TestClock {
  /** The store's idea of now, in ms since the epoch. */
  now(): number;
  /** Lets `ms` pass for the store: at once for an injected clock, by sleeping for a real one. */
  advance(ms: number): Promise<void>;
}

/** An injected clock for the memory stores; starts at noon UTC so that no test crosses midnight. */
export class ManualClock implements TestClock {
  constructor(private current = Date.UTC(2026, 2, 10, 12)) {}

  readonly now = (): number => this.current;

  async advance(ms: number): Promise<void> {
    this.current += ms;
  }
}

export const realClock: TestClock = {
  now: Date.now,
  // At least `ms` on another clock (Redis TIME): a timer may fire a little early against it (libuv
  // counts from the loop's cached time), and Date.now() ticks in whole ms; so one more, and again
  // until then. A test that saw the store's clock move 19 ms after advance(20) failed in CI.
  advance: async (ms) => {
    const until = Date.now() + ms + 1;
    while (Date.now() < until) await new Promise((resolve) => setTimeout(resolve, until - Date.now()));
  },
};

export interface Fixture<S> {
  store: S;
  clock: TestClock;
  close(): Promise<void>;
}

/** Called once per test, so that every test starts from an empty store. */
export type FixtureFactory<S> = () => Promise<Fixture<S>>;

async function withFixture<S>(factory: FixtureFactory<S>, body: (fixture: Fixture<S>) => Promise<void>): Promise<void> {
  const fixture = await factory();
  try {
    await body(fixture);
  } finally {
    await fixture.close();
  }
}

let uniqueCounter = 0;
export function unique(prefix: string): string {
  uniqueCounter += 1;
  return `${prefix}-${uniqueCounter}-${randomBytes(3).toString('hex')}`;
}

function policy(decision: RateDecision, name: PolicyName): PolicyState {
  const state = decision.policies.find((candidate) => candidate.name === name);
  assert.ok(state, `policy ${name} reported`);
  return state;
}

function assertBetween(actual: number | null, min: number, max: number, what: string): void {
  assert.ok(actual !== null && actual >= min && actual <= max, `${what}: ${actual} not in [${min}, ${max}]`);
}

function msUntilNextUtcMidnight(now: number): number {
  const day = 86_400_000;
  return (Math.floor(now / day) + 1) * day - now;
}

// ---- rate limits --------------------------------------------------------------------------------

/** The three decisions the gateway asks for, as `hit` groups. */
export function hitKey(store: RateLimitStore, request: KeyLimitRequest): Promise<RateDecision> {
  return store.hit([keyGroup(request)]);
}

export function hitIp(store: RateLimitStore, ip: string, policy: WindowPolicy): Promise<RateDecision> {
  return store.hit([ipGroup(ip, policy)]);
}

export function hitIpAndKey(store: RateLimitStore, ip: string, policy: WindowPolicy, request: KeyLimitRequest): Promise<RateDecision> {
  return store.hit([ipGroup(ip, policy), keyGroup(request)]);
}

/** 5 per 1 s period with a burst of 2: one per 200 ms, 3 at once from rest. */
function keyRequest(overrides: Partial<KeyLimitRequest> = {}): KeyLimitRequest {
  return {
    accountId: unique('acct'),
    keyId: unique('key'),
    perMinute: { ratePerMinute: 5, burst: 2, periodMs: 1_000 },
    perDay: 1_000,
    accountPerMinute: null,
    ...overrides,
  };
}

/** Effectively unlimited, for tests about the other policies. */
const GENEROUS_MINUTE = { ratePerMinute: 1_000, burst: 1_000, periodMs: 60_000 };

async function hitTimes(store: RateLimitStore, request: KeyLimitRequest, times: number): Promise<RateDecision[]> {
  const decisions: RateDecision[] = [];
  for (let index = 0; index < times; index += 1) decisions.push(await hitKey(store, request));
  return decisions;
}

export function runRateLimitConformance(t: Test, name: string, factory: FixtureFactory<RateLimitStore>): void {
  const test = (t: Test, title: string, body: (fixture: Fixture<RateLimitStore>) => Promise<void>): void => {
    t.test(title, async () => withFixture(factory, body));
  };

  t.test(`${name}: rate limits`, async (t) => {
    test(t, 'GCRA: a key at rest sends burst + 1 at once, then one per interval', async ({ store, clock }) => {
      const request = keyRequest();
      const burst = await hitTimes(store, request, 3);
      assert.deepEqual(
        burst.map((decision) => [decision.allowed, policy(decision, 'key_minute').remaining]),
        [[true, 2], [true, 1], [true, 0]],
      );
      const refused = await hitKey(store, request);
      assert.equal(refused.allowed, false);
      assert.deepEqual(refused.violated, ['key_minute']);
      assertBetween(refused.retryAfterMs, 1, 200, 'retryAfterMs');
      assert.equal(policy(refused, 'key_minute').remaining, 0);

      await clock.advance((refused.retryAfterMs ?? 0) + 10);
      assert.equal((await hitKey(store, request)).allowed, true);
      assert.equal((await hitKey(store, request)).allowed, false, 'only one more per interval');
    });

    test(t, 'GCRA: reports limit burst + 1, and the time until the full burst is back', async ({ store, clock }) => {
      const request = keyRequest();
      const [, , last] = await hitTimes(store, request, 3);
      const state = policy(last as RateDecision, 'key_minute');
      assert.equal(state.limit, 3);
      assert.equal(state.windowSeconds, 1);
      assertBetween(state.resetMs, 500, 600, 'resetMs');

      await clock.advance(state.resetMs + 20);
      const rested = await hitKey(store, request);
      assert.equal(policy(rested, 'key_minute').remaining, 2, 'a full burst again, minus this request');
    });

    test(t, 'day: perDay requests per UTC day, then refused until the next UTC midnight', async ({ store, clock }) => {
      const request = keyRequest({ perMinute: GENEROUS_MINUTE, perDay: 3 });
      const allowed = await hitTimes(store, request, 3);
      assert.deepEqual(
        allowed.map((decision) => policy(decision, 'key_day').remaining),
        [2, 1, 0],
      );
      const refused = await hitKey(store, request);
      assert.deepEqual(refused.violated, ['key_day']);
      const untilMidnight = msUntilNextUtcMidnight(clock.now());
      assertBetween(refused.retryAfterMs, untilMidnight - 2_000, untilMidnight + 2_000, 'retryAfterMs');
      const day = policy(refused, 'key_day');
      assert.equal(day.limit, 3);
      assert.equal(day.windowSeconds, 86_400);
      assertBetween(day.resetMs, untilMidnight - 2_000, untilMidnight + 2_000, 'resetMs');
    });

    test(t, 'account: at most limit in any rolling window, across all keys of the account', async ({ store, clock }) => {
      const accountId = unique('acct');
      const accountPerMinute = { limit: 3, windowMs: 1_200 };
      const keyA = keyRequest({ accountId, perMinute: GENEROUS_MINUTE, accountPerMinute });
      const keyB = { ...keyA, keyId: unique('key') };

      assert.equal((await hitKey(store, keyA)).allowed, true);
      // Wide enough that a slow, loaded machine (the Redis store runs on real time) keeps the order.
      await clock.advance(600);
      const second = await hitKey(store, keyB);
      const third = await hitKey(store, keyA);
      assert.deepEqual([policy(second, 'account_minute').remaining, policy(third, 'account_minute').remaining], [1, 0]);

      const refused = await hitKey(store, keyB);
      assert.deepEqual(refused.violated, ['account_minute']);
      // The first request leaves the window 1,200 ms after it was made, about 600 ms from now.
      assertBetween(refused.retryAfterMs, 1, 600, 'retryAfterMs');

      await clock.advance((refused.retryAfterMs ?? 0) + 20);
      assert.equal((await hitKey(store, keyB)).allowed, true, 'the first request has left the window');
      const stillFull = await hitKey(store, keyA);
      assert.equal(stillFull.allowed, false, 'the other two are still inside it');
      // About 600 ms: the gap between the first and second request (longer when the machine is slow).
      assertBetween(stillFull.retryAfterMs, 300, 900, 'retryAfterMs until the second leaves');
    });

    test(t, 'a request refused by the key limit consumes nothing from the day and account limits', async ({ store }) => {
      const request = keyRequest({
        perMinute: { ratePerMinute: 1, burst: 0, periodMs: 60_000 },
        perDay: 10,
        accountPerMinute: { limit: 5, windowMs: 60_000 },
      });
      const first = await hitKey(store, request);
      const refused = await hitKey(store, request);
      assert.deepEqual(refused.violated, ['key_minute']);
      for (const name of ['key_day', 'account_minute'] as const) {
        assert.equal(policy(refused, name).remaining, policy(first, name).remaining, name);
      }
    });

    test(t, 'a request refused by the day limit consumes nothing from the minute and account limits', async ({ store }) => {
      const request = keyRequest({ perMinute: GENEROUS_MINUTE, perDay: 1, accountPerMinute: { limit: 5, windowMs: 60_000 } });
      const first = await hitKey(store, request);
      const refused = await hitKey(store, request);
      assert.deepEqual(refused.violated, ['key_day']);
      for (const name of ['key_minute', 'account_minute'] as const) {
        assert.equal(policy(refused, name).remaining, policy(first, name).remaining, name);
      }
      assert.equal((await hitKey(store, request)).violated.includes('account_minute'), false, 'still within the account limit');
    });

    test(t, 'a request refused by the account limit consumes nothing from the key limits', async ({ store }) => {
      const accountId = unique('acct');
      const accountPerMinute = { limit: 1, windowMs: 60_000 };
      await hitKey(store, keyRequest({ accountId, accountPerMinute }));
      const other = keyRequest({ accountId, accountPerMinute, perDay: 10 });
      const refused = await hitKey(store, other);
      assert.deepEqual(refused.violated, ['account_minute']);
      assert.equal(policy(refused, 'key_minute').remaining, 3, 'the full burst');
      assert.equal(policy(refused, 'key_minute').resetMs, 0);
      assert.equal(policy(refused, 'key_day').remaining, 10);
      assert.equal(policy(refused, 'key_day').resetMs, 0);
    });

    test(t, 'retryAfterMs is when every violated policy allows again', async ({ store, clock }) => {
      const request = keyRequest({
        perMinute: { ratePerMinute: 1, burst: 0, periodMs: 600 },
        accountPerMinute: { limit: 1, windowMs: 300 },
      });
      await hitKey(store, request);
      const refused = await hitKey(store, request);
      assert.deepEqual([...refused.violated].sort(), ['account_minute', 'key_minute']);
      assertBetween(refused.retryAfterMs, 450, 600, 'retryAfterMs (the later of 300 and 600 ms)');

      await clock.advance(350);
      assert.deepEqual((await hitKey(store, request)).violated, ['key_minute'], 'the account limit has passed');
    });

    test(t, 'policies: each reported once, in order, with its limit and window', async ({ store }) => {
      const withAccount = await hitKey(store, keyRequest({ accountPerMinute: { limit: 120, windowMs: 60_000 } }));
      assert.deepEqual(
        withAccount.policies.map(({ name, limit, remaining, windowSeconds }) => ({ name, limit, remaining, windowSeconds })),
        [
          { name: 'key_minute', limit: 3, remaining: 2, windowSeconds: 1 },
          { name: 'key_day', limit: 1_000, remaining: 999, windowSeconds: 86_400 },
          { name: 'account_minute', limit: 120, remaining: 119, windowSeconds: 60 },
        ],
      );
      assert.equal(withAccount.retryAfterMs, null);
      assert.deepEqual(withAccount.violated, []);

      const withoutAccount = await hitKey(store, keyRequest());
      assert.deepEqual(
        withoutAccount.policies.map((state) => state.name),
        ['key_minute', 'key_day'],
      );
    });

    test(t, 'source IP: at most limit in any rolling window; IPs are counted apart', async ({ store, clock }) => {
      const policyIp = { limit: 2, windowMs: 300 };
      const ip = unique('198.51.100.7');
      assert.equal((await hitIp(store, ip, policyIp)).allowed, true);
      const last = await hitIp(store, ip, policyIp);
      assert.deepEqual(
        last.policies.map(({ name, limit, remaining, windowSeconds }) => ({ name, limit, remaining, windowSeconds })),
        [{ name: 'ip_minute', limit: 2, remaining: 0, windowSeconds: 0.3 }],
      );
      assertBetween(policy(last, 'ip_minute').resetMs, 250, 300, 'resetMs');

      const refused = await hitIp(store, ip, policyIp);
      assert.deepEqual(refused.violated, ['ip_minute']);
      assertBetween(refused.retryAfterMs, 1, 300, 'retryAfterMs');
      assert.equal((await hitIp(store, `2001:db8::${unique('ip')}`, policyIp)).allowed, true, 'another IP');

      await clock.advance((refused.retryAfterMs ?? 0) + 20);
      assert.equal((await hitIp(store, ip, policyIp)).allowed, true);
    });

    test(t, 'parallel requests on one key: exactly burst + 1 allowed', async ({ store }) => {
      const request = keyRequest({ perMinute: { ratePerMinute: 1, burst: 9, periodMs: 60_000 } });
      const decisions = await Promise.all(Array.from({ length: 30 }, () => hitKey(store, request)));
      assert.equal(decisions.filter((decision) => decision.allowed).length, 10);
    });

    test(t, 'parallel requests across keys: exactly the account limit allowed', async ({ store }) => {
      const accountId = unique('acct');
      const accountPerMinute = { limit: 7, windowMs: 60_000 };
      const keys = Array.from({ length: 5 }, () => keyRequest({ accountId, accountPerMinute, perMinute: GENEROUS_MINUTE }));
      const decisions = await Promise.all(Array.from({ length: 30 }, (_, index) => hitKey(store, keys[index % 5] as KeyLimitRequest)));
      assert.equal(decisions.filter((decision) => decision.allowed).length, 7);
    });

    test(t, 'parallel requests from one IP: exactly the limit allowed', async ({ store }) => {
      const ip = unique('203.0.113.7');
      const decisions = await Promise.all(Array.from({ length: 30 }, () => hitIp(store, ip, { limit: 12, windowMs: 60_000 })));
      assert.equal(decisions.filter((decision) => decision.allowed).length, 12);
    });

    test(t, 'IP and key in one decision: both counted, the IP policy reported first', async ({ store }) => {
      const ipPolicy = { limit: 5, windowMs: 60_000 };
      const allowed = await hitIpAndKey(store, 
        unique('198.51.100.9'),
        ipPolicy,
        keyRequest({ accountPerMinute: { limit: 120, windowMs: 60_000 } }),
      );
      assert.equal(allowed.allowed, true);
      assert.deepEqual(allowed.violated, []);
      assert.equal(allowed.retryAfterMs, null);
      assert.deepEqual(
        allowed.policies.map(({ name, limit, remaining, windowSeconds }) => ({ name, limit, remaining, windowSeconds })),
        [
          { name: 'ip_minute', limit: 5, remaining: 4, windowSeconds: 60 },
          { name: 'key_minute', limit: 3, remaining: 2, windowSeconds: 1 },
          { name: 'key_day', limit: 1_000, remaining: 999, windowSeconds: 86_400 },
          { name: 'account_minute', limit: 120, remaining: 119, windowSeconds: 60 },
        ],
      );

      const withoutAccount = await hitIpAndKey(store, unique('198.51.100.9'), ipPolicy, keyRequest());
      assert.deepEqual(
        withoutAccount.policies.map((state) => state.name),
        ['ip_minute', 'key_minute', 'key_day'],
      );
    });

    test(t, 'IP and key: refused by the IP limit, nothing of the key or account is consumed', async ({ store }) => {
      const ip = unique('198.51.100.10');
      const ipPolicy = { limit: 1, windowMs: 60_000 };
      const request = keyRequest({
        perMinute: { ratePerMinute: 1, burst: 2, periodMs: 60_000 },
        perDay: 10,
        accountPerMinute: { limit: 5, windowMs: 60_000 },
      });
      assert.equal((await hitIpAndKey(store, ip, ipPolicy, request)).allowed, true);

      const refused = await hitIpAndKey(store, ip, ipPolicy, request);
      assert.equal(refused.allowed, false);
      assert.deepEqual(refused.violated, ['ip_minute']);
      assertBetween(refused.retryAfterMs, 59_000, 60_000, 'retryAfterMs');
      assert.deepEqual(
        refused.policies.map((state) => state.name),
        ['ip_minute'],
        'the key and account limits were not looked at',
      );

      const next = await hitKey(store, request);
      assert.deepEqual(
        (['key_minute', 'key_day', 'account_minute'] as const).map((name) => policy(next, name).remaining),
        [1, 8, 3],
        'only the first request and this one consumed',
      );
    });

    test(t, 'IP and key: refused by the key limit, the request still counts for the IP', async ({ store }) => {
      const ip = unique('198.51.100.11');
      const ipPolicy = { limit: 5, windowMs: 60_000 };
      const request = keyRequest({ perMinute: { ratePerMinute: 1, burst: 0, periodMs: 60_000 }, perDay: 10 });
      assert.equal((await hitIpAndKey(store, ip, ipPolicy, request)).allowed, true);

      const refused = await hitIpAndKey(store, ip, ipPolicy, request);
      assert.equal(refused.allowed, false);
      assert.deepEqual(refused.violated, ['key_minute']);
      assertBetween(refused.retryAfterMs, 59_000, 60_000, 'retryAfterMs');
      assert.equal(policy(refused, 'ip_minute').remaining, 3, 'both requests counted for the IP');
      assert.equal(policy(refused, 'key_day').remaining, 9, 'the key limits stay all-or-nothing');
      assert.equal(policy(await hitIp(store, ip, ipPolicy), 'ip_minute').remaining, 2);
    });

    test(t, 'IP and key: parallel requests beyond the IP limit, exactly the limit allowed and consumed', async ({ store }) => {
      const ip = unique('203.0.113.8');
      const request = keyRequest({ perMinute: GENEROUS_MINUTE, perDay: 100 });
      const decisions = await Promise.all(
        Array.from({ length: 30 }, () => hitIpAndKey(store, ip, { limit: 12, windowMs: 60_000 }, request)),
      );
      assert.equal(decisions.filter((decision) => decision.allowed).length, 12);
      assert.equal(policy(await hitKey(store, request), 'key_day').remaining, 100 - 13, 'the refused ones consumed nothing');
    });

    test(t, 'IP and key: parallel requests beyond the key limit, exactly burst + 1 allowed, all counted for the IP', async ({ store }) => {
      const ip = unique('203.0.113.9');
      const ipPolicy = { limit: 20, windowMs: 60_000 };
      const request = keyRequest({ perMinute: { ratePerMinute: 1, burst: 4, periodMs: 60_000 } });
      const decisions = await Promise.all(Array.from({ length: 15 }, () => hitIpAndKey(store, ip, ipPolicy, request)));
      assert.equal(decisions.filter((decision) => decision.allowed).length, 5);
      assert.equal(policy(await hitIp(store, ip, ipPolicy), 'ip_minute').remaining, 20 - 16);
    });
  });
}

// ---- idempotency --------------------------------------------------------------------------------

const RESPONSE: StoredResponse = {
  status: 201,
  headers: { 'content-type': 'application/json', location: '/v1/orders/42' },
  body: '{"id":"42","note":"déjà vu ✓"}',
};

function beginRequest(overrides: Partial<BeginRequest> = {}): BeginRequest {
  return {
    accountId: unique('acct'),
    key: unique('idem'),
    fingerprint: 'fingerprint-1',
    endpoint: 'POST /v1/orders',
    leaseMs: 5_000,
    settleMs: 300,
    retentionMs: 60_000,
    staleAfterMs: null,
    ...overrides,
  };
}

async function acquire(store: IdempotencyStore, request: BeginRequest): Promise<string> {
  return (await acquired(store, request)).token;
}

async function acquired(store: IdempotencyStore, request: BeginRequest): Promise<Extract<BeginResult, { kind: 'acquired' }>> {
  const result = await store.begin(request);
  assert.equal(result.kind, 'acquired');
  return result;
}

export function runIdempotencyConformance(t: Test, name: string, factory: FixtureFactory<IdempotencyStore>): void {
  const test = (t: Test, title: string, body: (fixture: Fixture<IdempotencyStore>) => Promise<void>): void => {
    t.test(title, async () => withFixture(factory, body));
  };

  t.test(`${name}: idempotency`, async (t) => {
    test(t, 'a new key is acquired, with a token, a record id and nothing sent', async ({ store }) => {
      const result = await acquired(store, beginRequest());
      assert.ok(result.token.length >= 16);
      assert.ok(result.recordId.length >= 16);
      assert.equal(result.sentAt, null);
    });

    test(t, 'while the first request runs, a repeat is in progress, asked to come back after as long as it has run', async ({ store, clock }) => {
      // It may answer any moment; the lease's end (5 s) is only when a dead holder is given up.
      const request = beginRequest({ leaseMs: 5_000 });
      await acquire(store, request);
      const repeat = await store.begin(request);
      assert.equal(repeat.kind, 'in_progress');
      assertBetween(repeat.retryAfterMs, 1_000, 1_000, 'retryAfterMs, at least a second');
      await clock.advance(1_500);
      const later = await store.begin(request);
      assert.equal(later.kind, 'in_progress');
      assertBetween(later.retryAfterMs, 1_500, 3_000, 'retryAfterMs, as long as it has run');
    });

    test(t, 'a repeat is never asked to wait past the lease', async ({ store }) => {
      const request = beginRequest({ leaseMs: 600 });
      await acquire(store, request);
      const repeat = await store.begin(request);
      assert.equal(repeat.kind, 'in_progress');
      assertBetween(repeat.retryAfterMs, 400, 600, 'retryAfterMs');
    });

    test(t, 'a completed request replays its stored response, every time', async ({ store }) => {
      const request = beginRequest();
      await store.complete(request, await acquire(store, request), RESPONSE);
      for (let attempt = 0; attempt < 2; attempt += 1) {
        assert.deepEqual(await store.begin(request), { kind: 'replay', response: RESPONSE });
      }
    });

    test(t, 'another body with the same key conflicts, running or completed', async ({ store }) => {
      const request = beginRequest();
      const token = await acquire(store, request);
      assert.deepEqual(await store.begin({ ...request, fingerprint: 'fingerprint-2' }), { kind: 'conflict' });
      await store.complete(request, token, RESPONSE);
      assert.deepEqual(await store.begin({ ...request, fingerprint: 'fingerprint-2' }), { kind: 'conflict' });
    });

    test(t, 'the same key and body on another endpoint conflicts', async ({ store }) => {
      const request = beginRequest();
      await store.complete(request, await acquire(store, request), RESPONSE);
      const elsewhere = { ...request, endpoint: 'POST /v1/services/{id}/actions' };
      assert.deepEqual(await store.begin(elsewhere), { kind: 'conflict' });
    });

    test(t, 'keys are scoped to the account', async ({ store }) => {
      const request = beginRequest();
      await acquire(store, request);
      await acquire(store, { ...request, accountId: unique('acct') });
    });

    test(t, 'release forgets the attempt: the key is new again', async ({ store }) => {
      const request = beginRequest();
      await store.release(request, await acquire(store, request));
      const again = await acquired(store, request);
      assert.equal(again.sentAt, null);
    });

    test(t, 'an outcome marked unknown before any write-ahead mark is acquired again fresh; the old token is void', async ({ store }) => {
      const request = beginRequest();
      const first = await acquired(store, request);
      await store.markUnknown(request, first.token);
      const retry = await acquired(store, request);
      assert.equal(retry.sentAt, null, 'nothing was sent: it may be executed fresh');
      assert.equal(retry.recordId, first.recordId, 'the same record');
      assert.notEqual(retry.token, first.token);
      await store.complete(request, first.token, { ...RESPONSE, body: 'from the old holder' });
      assert.equal((await store.begin(request)).kind, 'in_progress', 'the old token stored nothing');
    });

    test(t, 'after a write-ahead mark: in progress until the settle time has passed, then acquired to reconcile', async ({ store, clock }) => {
      const request = beginRequest({ settleMs: 300 });
      const first = await acquired(store, request);
      assert.equal(await store.markSent(request, first.token, 5_000), true);
      await store.markUnknown(request, first.token);
      const early = await store.begin(request);
      assert.equal(early.kind, 'in_progress', 'upstream may still be working on the write');
      assertBetween(early.retryAfterMs, 1, 300, 'retryAfterMs');

      await clock.advance(350);
      const retry = await acquired(store, request);
      assert.notEqual(retry.sentAt, null, 'the next holder knows a write was sent');
      assert.equal(retry.recordId, first.recordId);
      assert.notEqual(retry.token, first.token);

      await store.complete(request, first.token, { ...RESPONSE, body: 'from the old holder' });
      assert.equal((await store.begin(request)).kind, 'in_progress', 'the old token stored nothing');
      await store.complete(request, retry.token, RESPONSE);
      assert.deepEqual(await store.begin(request), { kind: 'replay', response: RESPONSE });
    });

    test(t, 'a token that does not hold the key changes nothing', async ({ store }) => {
      const request = beginRequest();
      await acquire(store, request);
      await store.complete(request, 'not-the-token', RESPONSE);
      await store.markUnknown(request, 'not-the-token');
      await store.release(request, 'not-the-token');
      assert.equal((await store.begin(request)).kind, 'in_progress');
    });

    test(t, 'a holder that died before its write-ahead mark is replaced once its lease ran out, executing fresh', async ({ store, clock }) => {
      const request = beginRequest({ leaseMs: 200 });
      const crashed = await acquired(store, request);
      await clock.advance(250);
      const takeover = await acquired(store, request);
      assert.equal(takeover.sentAt, null);
      assert.equal(takeover.recordId, crashed.recordId);
      assert.notEqual(takeover.token, crashed.token);
    });

    test(t, 'a holder that died after its write-ahead mark: an expired lease never means "never sent"', async ({ store, clock }) => {
      const request = beginRequest({ leaseMs: 200, settleMs: 400 });
      const crashed = await acquired(store, request);
      assert.equal(await store.markSent(request, crashed.token, 200), true);
      await clock.advance(250);
      assert.equal((await store.begin(request)).kind, 'in_progress', 'lease over, settle time not');
      await clock.advance(200);
      const takeover = await acquired(store, request);
      assert.notEqual(takeover.sentAt, null);
    });

    test(t, 'markSent renews the lease, and a token that lost the key may not send', async ({ store, clock }) => {
      const request = beginRequest({ leaseMs: 200, settleMs: 200 });
      const slow = await acquired(store, request);
      await clock.advance(150);
      assert.equal(await store.markSent(request, slow.token, 400), true);
      await clock.advance(250);
      assert.equal((await store.begin(request)).kind, 'in_progress', 'the renewed lease still holds');

      const other = beginRequest({ leaseMs: 200 });
      const lost = await acquired(store, other);
      await clock.advance(250);
      const third = await acquired(store, other);
      assert.equal(await store.markSent(other, lost.token, 5_000), false, 'the lease was lost: send nothing');
      assert.equal(await store.markSent(other, third.token, 5_000), true);
    });

    test(t, 'release after a write-ahead mark keeps the record: the next holder reconciles', async ({ store, clock }) => {
      const request = beginRequest({ settleMs: 100 });
      const first = await acquired(store, request);
      await store.markSent(request, first.token, 5_000);
      await store.release(request, first.token);
      await clock.advance(150);
      const retry = await acquired(store, request);
      assert.notEqual(retry.sentAt, null);
      assert.equal(retry.recordId, first.recordId);
    });

    test(t, 'unmarkSent takes back the token\'s own write-ahead mark, never an earlier attempt\'s', async ({ store, clock }) => {
      const own = beginRequest();
      const first = await acquired(store, own);
      assert.equal(await store.markSent(own, first.token, 5_000), true);
      await store.unmarkSent(own, 'not-the-token');
      await store.unmarkSent(own, first.token);
      await store.release(own, first.token);
      assert.equal((await acquired(store, own)).sentAt, null, 'nothing was sent: the key is new again');

      const earlier = beginRequest({ settleMs: 100 });
      const crashed = await acquired(store, earlier);
      assert.equal(await store.markSent(earlier, crashed.token, 5_000), true);
      await store.markUnknown(earlier, crashed.token);
      await clock.advance(150);
      const retry = await acquired(store, earlier);
      assert.notEqual(retry.sentAt, null);
      assert.equal(await store.markSent(earlier, retry.token, 5_000), true);
      await store.unmarkSent(earlier, retry.token);
      await store.release(earlier, retry.token);
      await clock.advance(150);
      assert.notEqual((await acquired(store, earlier)).sentAt, null, 'the earlier attempt may have acted: it stays');
    });

    test(t, 'Profile A: stale once older than staleAfterMs, counted from the first request', async ({ store, clock }) => {
      const request = beginRequest({ staleAfterMs: 400, retentionMs: 60_000 });
      const token = await acquire(store, request);
      await clock.advance(200);
      await store.complete(request, token, RESPONSE);
      assert.equal((await store.begin(request)).kind, 'replay');
      if (clock instanceof ManualClock) {
        // Only an injected clock stops at the boundary (Redis reads its own TIME; its script makes
        // the same comparison).
        await clock.advance(200);
        assert.equal((await store.begin(request)).kind, 'replay', 'at exactly staleAfterMs: "within one hour" (spec)');
        await clock.advance(1);
      } else {
        await clock.advance(250);
      }
      assert.deepEqual(await store.begin(request), { kind: 'stale' });
      assert.deepEqual(await store.begin(request), { kind: 'stale' }, 'and it stays stale');
      assert.deepEqual(await store.begin({ ...request, fingerprint: 'fingerprint-2' }), { kind: 'stale' }, 'another body too');
    });

    test(t, 'Profile A: records in progress or of unknown outcome are stale after staleAfterMs too', async ({ store, clock }) => {
      const running = beginRequest({ staleAfterMs: 300, leaseMs: 60_000 });
      await acquire(store, running);
      const unknown = beginRequest({ staleAfterMs: 300, settleMs: 60_000 });
      const token = await acquire(store, unknown);
      await store.markSent(unknown, token, 60_000);
      await store.markUnknown(unknown, token);
      await clock.advance(350);
      assert.deepEqual(await store.begin(running), { kind: 'stale' });
      assert.deepEqual(await store.begin(unknown), { kind: 'stale' });
    });

    test(t, 'Profile B: after retentionMs from the first request the key is new again', async ({ store, clock }) => {
      const request = beginRequest({ staleAfterMs: null, retentionMs: 400 });
      const token = await acquire(store, request);
      await clock.advance(250);
      await store.complete(request, token, RESPONSE);
      assert.equal((await store.begin(request)).kind, 'replay', 'completing does not extend the retention');

      await clock.advance(200);
      assert.equal((await acquired(store, request)).sentAt, null);
    });

    test(t, 'a write announced near the end of the retention keeps the record until it has settled', async ({ store, clock }) => {
      const request = beginRequest({ retentionMs: 2_000, leaseMs: 5_000, settleMs: 1_000 });
      const first = await acquired(store, request);
      assert.equal(await store.markSent(request, first.token, 100), true);
      await store.markUnknown(request, first.token);
      await clock.advance(1_500);
      const retry = await acquired(store, request);
      assert.notEqual(retry.sentAt, null, 'settled, within the retention: the retry reconciles');
      assert.equal(await store.markSent(request, retry.token, 5_000), true, 'found nothing: it sends again');
      await clock.advance(750);
      const during = await store.begin(request);
      assert.equal(during.kind, 'in_progress', 'past the retention, the write just sent may still run: never a fresh claim');
    });

    test(t, 'a key reused after its record expired gets a new record id', async ({ store, clock }) => {
      const request = beginRequest({ retentionMs: 200, settleMs: 50 });
      const first = await acquired(store, request);
      await store.markSent(request, first.token, 5_000);
      await store.markUnknown(request, first.token);
      await clock.advance(250);
      const reused = await acquired(store, request);
      assert.equal(reused.sentAt, null);
      assert.notEqual(reused.recordId, first.recordId);
    });

    test(t, 'parallel begins on one key: exactly one acquires', async ({ store }) => {
      const request = beginRequest();
      const results = await Promise.all(Array.from({ length: 20 }, () => store.begin(request)));
      assert.equal(results.filter((result) => result.kind === 'acquired').length, 1);
      assert.equal(results.filter((result) => result.kind === 'in_progress').length, 19);
    });
  });
}

// ---- keys and accounts --------------------------------------------------------------------------

function account(overrides: Partial<AccountRecord> = {}): AccountRecord {
  return { id: unique('acct'), name: 'Example Reseller', upstreamId: '17', createdAt: '2026-03-01T10:00:00.000Z', ...overrides };
}

function apiKey(accountId: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id: randomBytes(8).toString('hex'),
    accountId,
    name: 'ci',
    scopes: ['read:products', 'write:orders'],
    secretHash: randomBytes(32).toString('hex'),
    createdAt: '2026-03-01T10:00:00.000Z',
    expiresAt: null,
    revokedAt: null,
    rateLimits: { perMinute: 30, burst: 5 },
    ...overrides,
  };
}

async function eventually(what: string, condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function runKeyStoreConformance(t: Test, name: string, factory: FixtureFactory<KeyStore>): void {
  const test = (t: Test, title: string, body: (fixture: Fixture<KeyStore>) => Promise<void>): void => {
    t.test(title, async () => withFixture(factory, body));
  };

  t.test(`${name}: keys and accounts`, async (t) => {
    test(t, 'accounts: put, get, list oldest first, overwrite', async ({ store }) => {
      const later = account({ createdAt: '2026-03-02T00:00:00.000Z' });
      const earlier = account({ createdAt: '2026-03-01T00:00:00.000Z' });
      await store.putAccount(later);
      await store.putAccount(earlier);
      assert.deepEqual(await store.getAccount(later.id), later);
      assert.equal(await store.getAccount('no-such-account'), null);
      assert.deepEqual(await store.listAccounts(), [earlier, later]);

      const renamed = { ...later, name: 'Renamed' };
      await store.putAccount(renamed);
      assert.deepEqual(await store.getAccount(later.id), renamed);
    });

    test(t, 'accounts: disabled and enabled again; a record without the field reads as written', async ({ store }) => {
      const plain = account();
      await store.putAccount(plain);
      assert.equal('disabledAt' in ((await store.getAccount(plain.id)) ?? {}), false, 'older records have no disabledAt');
      const disabled = { ...plain, disabledAt: '2026-03-03T00:00:00.000Z' };
      await store.putAccount(disabled);
      assert.deepEqual(await store.getAccount(plain.id), disabled);
      assert.deepEqual(await store.listAccounts(), [disabled]);
      await store.putAccount({ ...plain, disabledAt: null });
      assert.equal((await store.getAccount(plain.id))?.disabledAt, null);
    });

    test(t, 'keys: put, get, list per account and all, oldest first, overwrite', async ({ store }) => {
      const first = account();
      const second = account();
      const newer = apiKey(first.id, { createdAt: '2026-03-05T00:00:00.000Z' });
      const older = apiKey(first.id, { createdAt: '2026-03-04T00:00:00.000Z', expiresAt: '2027-01-01T00:00:00.000Z' });
      const others = apiKey(second.id, { rateLimits: null });
      for (const key of [newer, older, others]) await store.putKey(key);

      assert.deepEqual(await store.getKey(older.id), older);
      assert.equal(await store.getKey('0000000000000000'), null);
      assert.deepEqual(await store.listKeys(first.id), [older, newer]);
      assert.deepEqual(await store.listKeys(second.id), [others]);
      assert.deepEqual(await store.listKeys('no-such-account'), []);
      assert.deepEqual(await store.listKeys(), [others, older, newer]);

      const revoked = { ...older, revokedAt: '2026-03-06T00:00:00.000Z' };
      await store.putKey(revoked);
      assert.deepEqual(await store.getKey(older.id), revoked);
      assert.deepEqual(await store.listKeys(first.id), [revoked, newer]);
    });

    test(t, 'replace writes only over the record the caller read, else changes nothing', async ({ store }) => {
      const original = account();
      assert.equal(await store.replaceAccount(original, null), true, 'none stored: created');
      assert.equal(await store.replaceAccount({ ...original, name: 'Second' }, null), false, 'one exists now');
      const disabled = { ...original, disabledAt: '2026-03-03T00:00:00.000Z' };
      assert.equal(await store.replaceAccount(disabled, original), true);
      assert.equal(await store.replaceAccount({ ...original, name: 'Renamed' }, original), false, 'read before the disable');
      assert.deepEqual(await store.getAccount(original.id), disabled);

      const key = apiKey(original.id);
      await store.putKey(key);
      const now = { ...key, revokedAt: '2026-03-06T00:00:00.000Z' };
      assert.equal(await store.replaceKey(now, key), true);
      assert.equal(await store.replaceKey({ ...key, revokedAt: '2026-04-06T00:00:00.000Z' }, key), false, 'read before the revocation');
      assert.deepEqual(await store.getKey(key.id), now);
      assert.deepEqual(await store.listKeys(original.id), [now]);
      assert.equal(await store.replaceKey(apiKey(original.id), apiKey(original.id)), false, 'no such key');
    });

    test(t, 'a key with its account, as authentication reads them: both, or nothing', async ({ store }) => {
      const owner = account();
      const key = apiKey(owner.id);
      const orphan = apiKey(unique('gone'));
      await store.putAccount(owner);
      for (const each of [key, orphan]) await store.putKey(each);
      assert.deepEqual(await store.getKeyWithAccount(key.id), { key, account: owner });
      assert.equal(await store.getKeyWithAccount('0000000000000000'), null, 'unknown key');
      assert.equal(await store.getKeyWithAccount(orphan.id), null, 'a key whose account is gone');
    });

    test(t, 'records handed out are copies', async ({ store }) => {
      const key = apiKey(unique('acct'));
      await store.putKey(key);
      key.scopes.push('read:billing');
      const read = await store.getKey(key.id);
      assert.ok(read);
      read.scopes.push('read:credentials');
      assert.deepEqual((await store.getKey(key.id))?.scopes, ['read:products', 'write:orders']);
    });

    test(t, 'an invalidation reaches the listeners', async ({ store }) => {
      const seen: Array<string | null> = [];
      store.onInvalidation((keyId) => seen.push(keyId));
      await store.publishInvalidation('0123456789abcdef');
      await eventually('the invalidation', () => seen.includes('0123456789abcdef'));
    });
  });
  runUpstreamClaimConformance(t, name, factory);
  runAccountDeleteConformance(t, name, factory);
}

// ---- webhooks -----------------------------------------------------------------------------------

/** A webhook record as PUT writes it first: enabled, nothing delivered yet. */
export function webhookRecord(url: string, secret: string, updatedAt: string): WebhookRecord {
  return { url, secret, updatedAt, previousSecret: null, previousSecretExpiresAt: null, status: 'enabled', disabledReason: null, lastDelivery: null, failingSince: null, reportFrom: null };
}

export function runWebhookConformance(t: Test, name: string, factory: FixtureFactory<WebhookStore>): void {
  const test = (t: Test, title: string, body: (fixture: Fixture<WebhookStore>) => Promise<void>): void => {
    t.test(title, async () => withFixture(factory, body));
  };

  t.test(`${name}: webhooks`, async (t) => {
    test(t, 'one record per account: set, get, replace, clear', async ({ store }) => {
      const accountId = unique('acct');
      assert.equal(await store.get(accountId), null);
      const record = webhookRecord('https://hooks.example.com/a', 'whsec_1', '2026-03-01T00:00:00.000Z');
      await store.set(accountId, record, null);
      assert.deepEqual(await store.get(accountId), record);

      const replaced = { ...webhookRecord('https://hooks.example.com/b', 'whsec_2', '2026-03-02T00:00:00.000Z'), previousSecret: 'whsec_1', previousSecretExpiresAt: '2026-03-03T00:00:00.000Z' };
      await store.set(accountId, replaced, 'whsec_1');
      assert.deepEqual(await store.get(accountId), replaced);

      await store.clear(accountId);
      assert.equal(await store.get(accountId), null);
      await store.clear(accountId);
    });

    test(t, 'replaceSealedSecrets writes only the two sealed secrets, only over the ones the caller read', async ({ store }) => {
      const accountId = unique('acct');
      assert.equal(await store.replaceSealedSecrets(accountId, { secret: 'old', previousSecret: null }, { secret: 'new', previousSecret: null }), false, 'no record');
      assert.equal(await store.get(accountId), null, 'nothing created');
      const record = { ...webhookRecord('https://hooks.example.com/a', 'old', '2026-03-01T00:00:00.000Z'), previousSecret: 'old-prev', previousSecretExpiresAt: '2026-03-02T00:00:00.000Z' };
      await store.set(accountId, record, null);
      await store.disable(accountId, 'https://hooks.example.com/a', 'gone');
      const disabled = await store.get(accountId);
      assert.equal(await store.replaceSealedSecrets(accountId, { secret: 'old', previousSecret: 'other' }, { secret: 'new', previousSecret: 'new-prev' }), false, 'the previous secret changed');
      assert.deepEqual(await store.get(accountId), disabled);
      assert.equal(await store.replaceSealedSecrets(accountId, { secret: 'old', previousSecret: 'old-prev' }, { secret: 'new', previousSecret: 'new-prev' }), true);
      assert.deepEqual(await store.get(accountId), { ...disabled, secret: 'new', previousSecret: 'new-prev' }, 'the status written in between is kept');
      await store.set(accountId, webhookRecord('https://hooks.example.com/a', 'plain', '2026-03-03T00:00:00.000Z'), 'new');
      assert.equal(await store.replaceSealedSecrets(accountId, { secret: 'plain', previousSecret: null }, { secret: 'resealed', previousSecret: null }), true);
      assert.deepEqual(await store.get(accountId), webhookRecord('https://hooks.example.com/a', 'resealed', '2026-03-03T00:00:00.000Z'));
    });

    test(t, 'set writes only over the record the caller read (its secret), else changes nothing', async ({ store }) => {
      const accountId = unique('acct');
      const first = webhookRecord('https://hooks.example.com/a', 'whsec_1', '2026-03-01T00:00:00.000Z');
      assert.equal(await store.set(accountId, first, 'whsec_0'), false, 'there is no record to match');
      assert.equal(await store.get(accountId), null);
      assert.equal(await store.set(accountId, first, null), true);
      const second = webhookRecord('https://hooks.example.com/b', 'whsec_2', '2026-03-02T00:00:00.000Z');
      assert.equal(await store.set(accountId, second, null), false, 'another write made the record meanwhile');
      assert.equal(await store.set(accountId, second, 'whsec_0'), false, 'another secret is stored');
      assert.deepEqual(await store.get(accountId), first);
      assert.equal(await store.set(accountId, second, 'whsec_1'), true);
      assert.deepEqual(await store.get(accountId), second);
    });

    test(t, 'accounts do not see each other', async ({ store }) => {
      const [first, second] = [unique('acct'), unique('acct')];
      await store.set(first, webhookRecord('https://hooks.example.com/1', 's1', '2026-03-01T00:00:00.000Z'), null);
      assert.equal(await store.get(second), null);
      await store.clear(second);
      assert.ok(await store.get(first));
    });
  });
}

/**
 * A key read into a KeyService's cache, then revoked in the store with no message sent (as if the
 * invalidation were lost): its cached copy still serves until something makes it read again.
 */
export async function revokedUnannounced(keys: KeyStore): Promise<{ service: KeyService; key: string }> {
  const service = new KeyService(keys, 'resubscribe-pepper-0123456789abcdef0123456789', { cacheTtlMs: 600_000 });
  await service.createAccount({ id: 'acct_r', name: 'R', upstreamId: '1' });
  const { record, key } = await service.issue({ accountId: 'acct_r', name: 'k', scopes: ['read:products'] });
  assert.equal(typeof (await service.authenticate(key)), 'object');
  await keys.putKey({ ...record, revokedAt: new Date(Date.now() - 1_000).toISOString() });
  assert.equal(typeof (await service.authenticate(key)), 'object', 'the cached copy serves while it is fresh');
  return { service, key };
}
