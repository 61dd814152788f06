/**
 * What every webhook store and outbox must do, memory and Redis alike: endpoint status, the change
 * detector's snapshot and lease, and the outbox's claim / retry / release / take-over rules.
 */
import assert from 'node:assert/strict';
import type { Test } from 'tap';
import type { DeliveryLogEntry, EnqueueResult, WebhookOutbox, WebhookRecord, WebhookStore } from '../../src/stores/webhook-types.js';
import { snapshotTagTime } from '../../src/webhooks/signing.js';
import { unique, webhookRecord, type Fixture, type FixtureFactory } from './conformance.js';

async function withFixture<S>(factory: FixtureFactory<S>, body: (fixture: Fixture<S>) => Promise<void>): Promise<void> {
  const fixture = await factory();
  try {
    await body(fixture);
  } finally {
    await fixture.close();
  }
}

/** What an endpoint's status is, and why. */
function pick(record: WebhookRecord | null) {
  return record && { status: record.status, disabledReason: record.disabledReason };
}

export function runWebhookStateConformance(t: Test, name: string, factory: FixtureFactory<WebhookStore>): void {
  const test = (t: Test, title: string, body: (fixture: Fixture<WebhookStore>) => Promise<void>): void => {
    t.test(title, async () => withFixture(factory, body));
  };

  t.test(`${name}: webhook endpoint state`, async (t) => {
    test(t, 'deliveries: failing_since starts with the first failure of a run and ends with a success', async ({ store }) => {
      const account = unique('acct');
      assert.equal(await store.recordDelivery(account, 'https://hooks.example.com/a', { at: '2026-03-01T00:00:00.000Z', httpStatus: 500, attempts: 1 }, false), null, 'no URL, nothing recorded');
      await store.set(account, webhookRecord('https://hooks.example.com/a', 'sealed', '2026-03-01T00:00:00.000Z'), null);
      await store.recordDelivery(account, 'https://hooks.example.com/a', { at: '2026-03-01T00:00:01.000Z', httpStatus: 500, attempts: 1 }, false);
      const second = await store.recordDelivery(account, 'https://hooks.example.com/a', { at: '2026-03-01T00:00:02.000Z', httpStatus: null, attempts: 2 }, false);
      assert.equal(second?.failingSince, '2026-03-01T00:00:01.000Z');
      assert.deepEqual(second?.lastDelivery, { at: '2026-03-01T00:00:02.000Z', httpStatus: null, attempts: 2 });
      const ok = await store.recordDelivery(account, 'https://hooks.example.com/a', { at: '2026-03-01T00:00:03.000Z', httpStatus: 204, attempts: 3 }, true);
      assert.equal(ok?.failingSince, null);
      assert.deepEqual((await store.get(account))?.lastDelivery, { at: '2026-03-01T00:00:03.000Z', httpStatus: 204, attempts: 3 });
    });

    test(t, 'an attempt made to a URL replaced since is not recorded, and does not disable the new one', async ({ store }) => {
      const account = unique('acct');
      const record = webhookRecord('https://hooks.example.com/new', 'sealed', '2026-03-01T00:00:00.000Z');
      await store.set(account, record, null);
      assert.equal(await store.recordDelivery(account, 'https://hooks.example.com/a', { at: '2026-03-01T00:00:01.000Z', httpStatus: 410, attempts: 1 }, false), null);
      await store.disable(account, 'https://hooks.example.com/a', 'gone');
      assert.deepEqual(await store.get(account), record);
    });

    test(t, 'disable: only an existing endpoint, with its reason, until it is set again', async ({ store }) => {
      const account = unique('acct');
      await store.disable(account, 'https://hooks.example.com/a', 'gone');
      assert.equal(await store.get(account), null, 'disabling creates nothing');
      await store.set(account, webhookRecord('https://hooks.example.com/a', 'sealed', '2026-03-01T00:00:00.000Z'), null);
      await store.disable(account, 'https://hooks.example.com/a', 'gone');
      assert.deepEqual(pick(await store.get(account)), { status: 'disabled', disabledReason: 'gone' });
      await store.set(account, webhookRecord('https://hooks.example.com/a', 'sealed', '2026-03-02T00:00:00.000Z'), 'sealed');
      assert.deepEqual(pick(await store.get(account)), { status: 'enabled', disabledReason: null });
      await store.disable(account, 'https://hooks.example.com/a', 'failing');
      assert.deepEqual(pick(await store.get(account)), { status: 'disabled', disabledReason: 'failing' });
    });

    test(t, 'enable: a disabled endpoint is enabled again and its run of failures ends; nothing without a URL', async ({ store }) => {
      const account = unique('acct');
      assert.equal(await store.enable(account, '2026-03-03T00:00:00.000Z'), null);
      assert.equal(await store.get(account), null, 'enabling creates nothing');
      const record = webhookRecord('https://hooks.example.com/a', 'sealed', '2026-03-01T00:00:00.000Z');
      await store.set(account, { ...record, previousSecret: 'old', previousSecretExpiresAt: '2026-03-02T00:00:00.000Z' }, null);
      await store.recordDelivery(account, 'https://hooks.example.com/a', { at: '2026-03-01T00:00:01.000Z', httpStatus: 410, attempts: 1 }, false);
      await store.disable(account, 'https://hooks.example.com/a', 'failing');
      const enabled = await store.enable(account, '2026-03-03T00:00:00.000Z');
      assert.deepEqual(enabled, {
        ...record,
        previousSecret: 'old',
        previousSecretExpiresAt: '2026-03-02T00:00:00.000Z',
        lastDelivery: { at: '2026-03-01T00:00:01.000Z', httpStatus: 410, attempts: 1 },
        reportFrom: '2026-03-03T00:00:00.000Z',
      });
      assert.deepEqual(await store.get(account), enabled);
    });

    test(t, 'reportFrom: kept by set, cleared by disable, set anew by enable (an enabled endpoint keeps its own)', async ({ store }) => {
      const account = unique('acct');
      const url = 'https://hooks.example.com/a';
      const reportFrom = async () => (await store.get(account))?.reportFrom;
      await store.set(account, { ...webhookRecord(url, 'sealed', '2026-03-01T00:00:00.000Z'), reportFrom: '2026-03-01T00:00:00.000Z' }, null);
      assert.equal(await reportFrom(), '2026-03-01T00:00:00.000Z');
      assert.equal((await store.enable(account, '2026-03-02T00:00:00.000Z'))?.reportFrom, '2026-03-01T00:00:00.000Z', 'enabled already: its own time stays');
      await store.disable(account, url, 'gone');
      assert.equal(await reportFrom(), null, 'disabled: no changes are news to it');
      assert.equal((await store.enable(account, '2026-03-03T00:00:00.000Z'))?.reportFrom, '2026-03-03T00:00:00.000Z');
      // Disabled by a release that keeps the time (a rolling deploy): enabling still starts afresh.
      await store.set(account, { ...webhookRecord(url, 'sealed', '2026-03-04T00:00:00.000Z'), status: 'disabled', disabledReason: 'gone', reportFrom: '2026-03-01T00:00:00.000Z' }, 'sealed');
      assert.equal((await store.enable(account, '2026-03-05T00:00:00.000Z'))?.reportFrom, '2026-03-05T00:00:00.000Z');
      // An enabled record without one (the previous release's): enabling gives it one.
      await store.set(account, webhookRecord(url, 'sealed', '2026-03-06T00:00:00.000Z'), 'sealed');
      assert.equal(await reportFrom(), null);
      assert.equal((await store.enable(account, '2026-03-07T00:00:00.000Z'))?.reportFrom, '2026-03-07T00:00:00.000Z');
    });

    test(t, 'delivery log: one entry per event, replaced in place, newest first, paged, bounded', async ({ store }) => {
      const account = unique('acct');
      const entry = (n: number, overrides: Partial<DeliveryLogEntry> = {}): DeliveryLogEntry => ({
        eventId: `evt_${String(n).padStart(4, '0')}`,
        type: 'order.created',
        state: 'pending',
        attempts: 0,
        lastStatus: null,
        lastAttemptAt: null,
        nextAttemptAt: '2026-03-01T00:00:00.000Z',
        createdAt: new Date(Date.UTC(2026, 2, 1) + n * 1000).toISOString(),
        body: `{"n":${n}}`,
        ...overrides,
      });
      assert.deepEqual(await store.listDeliveries(account, 0, 10), { entries: [], total: 0 });
      for (const n of [1, 2, 3]) await store.logDelivery(account, entry(n), 3);
      const failed = entry(2, { state: 'failed', attempts: 8, lastStatus: 500, lastAttemptAt: '2026-03-02T00:00:00.000Z', nextAttemptAt: null });
      await store.logDelivery(account, failed, 3);
      assert.deepEqual(await store.getDelivery(account, 'evt_0002'), failed);
      assert.deepEqual(await store.listDeliveries(account, 0, 10), { entries: [entry(3), failed, entry(1)], total: 3 });
      assert.deepEqual(await store.listDeliveries(account, 1, 1), { entries: [failed], total: 3 });
      assert.deepEqual(await store.listDeliveries(account, 5, 1), { entries: [], total: 3 });

      await store.logDelivery(account, entry(4), 3);
      assert.deepEqual((await store.listDeliveries(account, 0, 10)).entries.map((e) => e.eventId), ['evt_0004', 'evt_0003', 'evt_0002']);
      assert.equal(await store.getDelivery(account, 'evt_0001'), null, 'the oldest was dropped');
      assert.equal(await store.getDelivery(unique('acct'), 'evt_0004'), null, 'accounts do not share logs');
      const sameInstant = entry(5, { eventId: 'evt_9999', createdAt: entry(4).createdAt });
      await store.logDelivery(account, sameInstant, 3);
      assert.deepEqual((await store.listDeliveries(account, 0, 2)).entries.map((e) => e.eventId), ['evt_9999', 'evt_0004'], 'ties: greater id first');
    });

    test(t, 'a deleted account is forgotten: its endpoint, snapshot, delivery log and delivery slots; another account keeps its own', async ({ store }) => {
      const [leaving, staying] = [unique('acct'), unique('acct')];
      const logged: DeliveryLogEntry = { eventId: 'evt_1', type: 'order.created', state: 'failed', attempts: 8, lastStatus: 500, lastAttemptAt: null, nextAttemptAt: null, createdAt: '2026-03-01T00:00:00.000Z', body: '{}' };
      for (const account of [leaving, staying]) {
        await store.set(account, webhookRecord('https://hooks.example.com/a', 'sealed', '2026-03-01T00:00:00.000Z'), null);
        await store.recordSnapshot(account, 'order:1', null, 'open');
        await store.logDelivery(account, logged, 10);
        assert.equal(await store.takeDeliverySlot(account, 'holder', 1, 60_000), true);
      }
      await store.forgetAccount(leaving);
      assert.equal(await store.get(leaving), null);
      assert.deepEqual(await store.readSnapshot(leaving), {});
      assert.deepEqual(await store.listDeliveries(leaving, 0, 10), { entries: [], total: 0 });
      assert.equal(await store.getDelivery(leaving, 'evt_1'), null);
      assert.equal(await store.takeDeliverySlot(leaving, 'another', 1, 60_000), true, 'its slots are free');
      assert.ok(await store.get(staying));
      assert.deepEqual(await store.readSnapshot(staying), { 'order:1': 'open' });
      assert.deepEqual(await store.listDeliveries(staying, 0, 10), { entries: [logged], total: 1 });
      assert.equal(await store.takeDeliverySlot(staying, 'another', 1, 60_000), false, 'its slot still held');
    });

    test(t, "clock: the store's own, in whole ms since the epoch, going forward with it", async ({ store, clock }) => {
      // Snapshot stamps and the detector's read times both come from it, whichever instance asks.
      const first = await store.clock(unique('acct'));
      await clock.advance(20);
      const later = await store.clock(unique('acct'));
      assert.equal(Number.isInteger(first), true, `${first} is whole ms`);
      assert.equal(Math.abs(first - clock.now()) < 60_000, true, `${first} is the store's time, not some other count`);
      assert.equal(later - first >= 20, true, `${later} is 20 ms or more after ${first}`);
      const account = unique('acct');
      assert.equal(await store.recordSnapshot(account, 'order:1', null, 'active', 'r4nd0m', true), true);
      const { tag } = (await store.readSnapshotState(account, 'order:1')) ?? { tag: '' };
      const stamped = snapshotTagTime(tag) ?? NaN;
      const after = await store.clock(account);
      assert.equal(tag.endsWith('.r4nd0m') && stamped >= later && stamped <= after, true, `${tag}: stamped by the store's clock between ${later} and ${after}`);
    });

    test(t, 'snapshot: read whole, per account; clear removes it with the record', async ({ store }) => {
      const account = unique('acct');
      assert.equal(await store.recordSnapshot(account, 'order:1', null, 'pending'), true);
      assert.equal(await store.recordSnapshot(account, 'order:1', 'pending', 'active'), true);
      await store.recordSnapshot(account, 'invoice:2', null, 'unpaid');
      assert.deepEqual(await store.readSnapshot(account), { 'order:1': 'active', 'invoice:2': 'unpaid' });
      assert.deepEqual(await store.readSnapshot(unique('acct')), {}, 'accounts do not share snapshots');
      await store.clear(account);
      assert.deepEqual(await store.readSnapshot(account), {});
    });

    test(t, 'snapshot: a state is recorded only over the one expected, so nothing newer is overwritten', async ({ store }) => {
      const account = unique('acct');
      assert.equal(await store.readSnapshotState(account, 'order:1'), null);
      assert.equal(await store.recordSnapshot(account, 'order:1', 'pending', 'active'), false, 'nothing there, pending expected');
      assert.equal(await store.recordSnapshot(account, 'order:1', null, 'pending'), true, 'first seen');
      assert.equal(await store.recordSnapshot(account, 'order:1', null, 'active'), false, 'recorded meanwhile');
      assert.equal(await store.recordSnapshot(account, 'order:1', 'pending', 'active'), true);
      assert.equal(await store.recordSnapshot(account, 'order:1', 'pending', 'cancelled'), false, 'a newer state stays');
      assert.deepEqual(await store.readSnapshotState(account, 'order:1'), { state: 'active', tag: '' });
      assert.equal(await store.readSnapshotState(unique('acct'), 'order:1'), null, 'accounts do not share snapshots');
      assert.deepEqual(await store.readSnapshot(account), { 'order:1': 'active' });
      assert.equal(await store.recordSnapshot(account, 'order:1', 'pending', null), false, 'forgotten only over the state expected');
      assert.equal(await store.recordSnapshot(account, 'order:1', 'active', null), true, 'deleted upstream: forgotten');
      assert.deepEqual(await store.readSnapshot(account), {});
    });

    test(t, 'snapshot: a tag is kept with its state, replaced with it, and forgotten with it', async ({ store }) => {
      const account = unique('acct');
      assert.equal(await store.recordSnapshot(account, 'service:1', null, 'pending', 't1'), true);
      assert.deepEqual(await store.readSnapshotState(account, 'service:1'), { state: 'pending', tag: 't1' });
      assert.equal(await store.recordSnapshot(account, 'service:1', 'active', 'suspended', 't2'), false);
      assert.deepEqual(await store.readSnapshotState(account, 'service:1'), { state: 'pending', tag: 't1' }, 'not recorded: the tag stays too');
      assert.equal(await store.recordSnapshot(account, 'service:1', 'pending', 'active', 't3'), true);
      assert.deepEqual(await store.readSnapshotState(account, 'service:1'), { state: 'active', tag: 't3' });
      assert.deepEqual(await store.readSnapshot(account), { 'service:1': 'active' }, 'the whole snapshot holds states only');
      assert.equal(await store.recordSnapshot(account, 'service:1', 'active', 'suspended'), true);
      assert.deepEqual(await store.readSnapshotState(account, 'service:1'), { state: 'suspended', tag: '' }, 'recorded without a tag: none');
      await store.recordSnapshot(account, 'service:1', 'suspended', 'active', 't4');
      assert.equal(await store.recordSnapshot(account, 'service:1', 'active', null), true);
      assert.equal(await store.recordSnapshot(account, 'service:1', null, 'pending'), true);
      assert.deepEqual(await store.readSnapshotState(account, 'service:1'), { state: 'pending', tag: '' }, 'forgotten with its state');
    });

    test(t, 'delivery slots: at most the limit per account, freed by their holder or by time', async ({ store, clock }) => {
      const [account, other] = [unique('acct'), unique('acct')];
      assert.equal(await store.takeDeliverySlot(account, 'a', 2, 300), true);
      assert.equal(await store.takeDeliverySlot(account, 'b', 2, 300), true);
      assert.equal(await store.takeDeliverySlot(account, 'c', 2, 300), false, 'both held');
      assert.equal(await store.takeDeliverySlot(account, 'a', 2, 300), true, 'a holder takes its own again');
      assert.equal(await store.takeDeliverySlot(other, 'c', 2, 300), true, 'accounts do not share slots');
      await store.freeDeliverySlot(account, 'b');
      await store.freeDeliverySlot(account, 'b');
      assert.equal(await store.takeDeliverySlot(account, 'c', 2, 300), true, 'freed by its holder');
      assert.equal(await store.takeDeliverySlot(account, 'd', 2, 300), false);
      await clock.advance(400);
      assert.equal(await store.takeDeliverySlot(account, 'd', 2, 300), true, 'a dead holder\'s slot frees itself');
      assert.equal(await store.takeDeliverySlot(account, 'e', 2, 300), true);
      assert.equal(await store.takeDeliverySlot(account, 'f', 2, 300), false);
    });

    test(t, 'lease: one holder at a time, renewable, free again after its time', async ({ store, clock }) => {
      const lease = unique('lease');
      assert.equal(await store.holdLease(lease, 'a', 300), true);
      assert.equal(await store.holdLease(lease, 'b', 300), false);
      assert.equal(await store.holdLease(lease, 'a', 300), true, 'the holder renews');
      await clock.advance(400);
      assert.equal(await store.holdLease(lease, 'b', 300), true, 'expired: another takes it');
      assert.equal(await store.holdLease(lease, 'a', 300), false);
    });

    test(t, 'lease: given up by its holder, free at once; another holder cannot give it up', async ({ store }) => {
      const lease = unique('lease');
      assert.equal(await store.holdLease(lease, 'a', 60_000), true);
      await store.releaseLease(lease, 'b');
      assert.equal(await store.holdLease(lease, 'b', 60_000), false, 'not given up by another');
      await store.releaseLease(lease, 'a');
      assert.equal(await store.holdLease(lease, 'b', 60_000), true, 'free once its holder gave it up');
    });
  });
}

/**
 * The outbox fixtures' admission: an account has 2 entries up for delivery and WAITING_BOUND more
 * waiting at most (webhooks.perAccountConcurrency, webhooks.maxWaitingPerAccount).
 */
export const WAITING_BOUND = 3;

export function runOutboxConformance(t: Test, name: string, factory: FixtureFactory<WebhookOutbox>): void {
  const test = (t: Test, title: string, body: (fixture: Fixture<WebhookOutbox>) => Promise<void>): void => {
    t.test(title, async () => withFixture(factory, body));
  };
  const IDLE_MS = 300;
  // An account each unless given: an account has two entries claimable at once (its delivery share).
  const entry = (eventId: string, accountId = `acct_${eventId}`) => ({
    eventId,
    accountId,
    body: `{"id":"${eventId}"}`,
    trace: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=1' },
  });

  t.test(`${name}: webhook outbox`, async (t) => {
    test(t, 'an entry is claimed by one consumer at a time and gone once delivered', async ({ store, clock }) => {
      await store.enqueue(entry('evt_1'));
      const [claimed, ...rest] = await store.claim('a', 10, IDLE_MS);
      assert.deepEqual(rest, []);
      assert.deepEqual({ ...claimed, handle: undefined }, { ...entry('evt_1'), attempts: 0, handle: undefined });
      assert.deepEqual(await store.claim('b', 10, IDLE_MS), [], 'claimed by a');
      await store.complete(claimed!, 'delivered');
      await clock.advance(IDLE_MS + 100);
      assert.deepEqual(await store.claim('b', 10, IDLE_MS), []);
    });

    test(t, 'an event id that still waits is not added again; once done, it may be', async ({ store }) => {
      assert.equal((await store.enqueue(entry('evt_1'))).outcome, 'queued');
      assert.equal((await store.enqueue({ ...entry('evt_1'), body: '{"id":"evt_1","again":true}' })).outcome, 'already_waiting', 'waiting: a change reported twice');
      const [claimed, ...rest] = await store.claim('a', 10, IDLE_MS);
      assert.deepEqual(rest, [], 'one entry');
      assert.equal(claimed?.body, entry('evt_1').body, 'the first report is the one delivered');
      await store.reschedule(claimed!, 0);
      assert.equal((await store.enqueue(entry('evt_1'))).outcome, 'already_waiting', 'waiting for a retry still waits');
      const [retried] = await store.claim('a', 10, IDLE_MS);
      await store.complete(retried!, 'delivered');
      assert.equal((await store.enqueue(entry('evt_1'))).outcome, 'queued', 'delivered: a later report is queued (the receiver deduplicates)');
      assert.equal((await store.backlog()).depth, 1);
    });

    test(t, 'claims at most max, in enqueue order', async ({ store }) => {
      for (const id of ['evt_1', 'evt_2', 'evt_3']) await store.enqueue(entry(id));
      assert.deepEqual((await store.claim('a', 2, IDLE_MS)).map((d) => d.eventId), ['evt_1', 'evt_2']);
      assert.deepEqual((await store.claim('b', 2, IDLE_MS)).map((d) => d.eventId), ['evt_3']);
    });

    test(t, 'a rescheduled entry waits for its delay and comes back with one more attempt', async ({ store, clock }) => {
      await store.enqueue(entry('evt_1'));
      const [first] = await store.claim('a', 1, 60_000);
      await store.reschedule(first!, 300);
      assert.deepEqual(await store.claim('a', 1, 60_000), [], 'not due yet');
      await clock.advance(400);
      const [again] = await store.claim('b', 1, 60_000);
      assert.equal(again?.eventId, 'evt_1');
      assert.equal(again?.body, entry('evt_1').body);
      assert.deepEqual(again?.trace, entry('evt_1').trace, 'the trace goes with every attempt');
      assert.equal(again?.attempts, 1);
    });

    test(t, "an account's entries beyond its share wait in order; a parked one comes back, unattempted, as one of its deliveries ends", async ({ store }) => {
      for (const id of ['evt_1', 'evt_2', 'evt_3']) await store.enqueue(entry(id, 'acct'));
      await store.enqueue(entry('evt_other'));
      const [first, second, ...rest] = await store.claim('a', 10, IDLE_MS);
      assert.deepEqual([first?.eventId, second?.eventId, ...rest.map((d) => d.eventId)], ['evt_1', 'evt_2', 'evt_other'], "evt_3 waits behind its account's share, not before the other account's event");
      await store.park(second!);
      assert.equal((await store.backlog()).depth, 4, 'still waiting');
      assert.deepEqual(await store.claim('b', 10, IDLE_MS), [], 'parked: claimed by nobody, and no longer a\'s');
      await store.complete(first!, 'delivered');
      const again = await store.claim('b', 10, IDLE_MS);
      assert.deepEqual(again.map((d) => [d.eventId, d.attempts]), [['evt_2', 0], ['evt_3', 0]], 'at its own place, no attempt counted');
    });

    test(t, "an account's line is bounded: beyond its share and WAITING_BOUND waiting, its new events are refused, another account's are not", async ({ store }) => {
      const waiting = Array.from({ length: 2 + WAITING_BOUND }, (_, index) => `evt_${index}`);
      for (const id of waiting) assert.equal((await store.enqueue(entry(id, 'acct'))).outcome, 'queued', id);
      assert.equal((await store.enqueue(entry('evt_over', 'acct'))).outcome, 'full', 'its line holds WAITING_BOUND');
      assert.equal((await store.enqueue(entry('evt_0', 'acct'))).outcome, 'already_waiting', 'one that waits already is still that');
      assert.equal((await store.enqueue(entry('evt_other'))).outcome, 'queued', 'another account is not held back');
      assert.equal((await store.backlog()).depth, waiting.length + 1, 'the refused one is not kept');
      const [first] = await store.claim('a', 1, IDLE_MS);
      await store.complete(first!, 'delivered');
      assert.equal((await store.enqueue(entry('evt_over', 'acct'))).outcome, 'queued', 'room again once one of its deliveries ends');
    });

    test(t, "a deleted account is forgotten: its event counter gone, another account's kept", async ({ store }) => {
      const numbered = (eventId: string, accountId: string) => ({ ...entry(eventId, accountId), numbered: true });
      const sequenceOf = (result: EnqueueResult) => ('body' in result ? (JSON.parse(result.body) as { sequence?: number }).sequence : undefined);
      for (const eventId of ['evt_l1', 'evt_l2']) await store.enqueue(numbered(eventId, 'leaving'));
      await store.enqueue(numbered('evt_s1', 'staying'));
      await store.forgetAccount('leaving');
      assert.equal(sequenceOf(await store.enqueue(numbered('evt_l3', 'leaving'))), 1, 'counted from nothing');
      assert.equal(sequenceOf(await store.enqueue(numbered('evt_s2', 'staying'))), 2);
    });

    test(t, "numbered events carry their account's next sequence number in the stored body: a dropped one takes its number, a duplicate refused takes none", async ({ store }) => {
      const numbered = (eventId: string, accountId = 'acct') => ({ ...entry(eventId, accountId), numbered: true });
      const sequenceOf = (result: EnqueueResult) => ('body' in result ? (JSON.parse(result.body) as { sequence?: number }).sequence : undefined);
      const first = await store.enqueue(numbered('evt_0'));
      assert.deepEqual(first, { outcome: 'queued', body: '{"id":"evt_0","sequence":1}' }, 'the number is added to the body, the rest left byte for byte');
      assert.deepEqual(await store.enqueue(numbered('evt_0')), { outcome: 'already_waiting' }, 'a duplicate is refused');
      const queued: EnqueueResult[] = [first];
      for (let index = 1; index < 2 + WAITING_BOUND; index += 1) queued.push(await store.enqueue(numbered(`evt_${index}`)));
      assert.deepEqual(queued.map(sequenceOf), [1, 2, 3, 4, 5], 'the refused duplicate took no number');
      const dropped = await store.enqueue(numbered('evt_over'));
      assert.deepEqual(dropped, { outcome: 'full', body: '{"id":"evt_over","sequence":6}' }, 'a dropped event takes its number: the receiver sees the gap');
      assert.equal(sequenceOf(await store.enqueue(numbered('evt_elsewhere', 'other'))), 1, 'numbers are per account');
      assert.deepEqual(await store.enqueue({ ...entry('evt_empty', 'empty'), body: '{}', numbered: true }), { outcome: 'queued', body: '{"sequence":1}' });
      const escaped = '{"note":"d\u00e9j\u00e0 \\"vu\\" \\\\ \u2713 \ud83d\ude00 }\\n"}';
      assert.deepEqual(await store.enqueue({ ...entry('evt_escaped', 'escaped'), body: escaped, numbered: true }), { outcome: 'queued', body: `${escaped.slice(0, -1)},"sequence":1}` });
      const claimed = await store.claim('a', 10, IDLE_MS);
      const delivered = claimed.find((delivery) => delivery.eventId === 'evt_0');
      assert.equal(delivered?.body, '{"id":"evt_0","sequence":1}', 'the numbered body is the one delivered (and signed)');
      assert.equal(claimed.find((delivery) => delivery.eventId === 'evt_escaped')?.body, `${escaped.slice(0, -1)},"sequence":1}`, 'escapes, non-ASCII and braces in strings kept');
      await store.complete(delivered!, 'delivered');
      const replay = { ...entry('evt_over'), accountId: 'acct', body: (dropped as { body: string }).body };
      assert.deepEqual(await store.enqueue(replay), { outcome: 'queued', body: '{"id":"evt_over","sequence":6}' }, 'a replay (not numbered) keeps its number');
      assert.equal(sequenceOf(await store.enqueue(numbered('evt_next'))), 7, 'the replay took no number');
    });

    test(t, 'the backlog counts what waits (due, retrying or being delivered) and ages the oldest by its enqueue time', async ({ store, clock }) => {
      assert.deepEqual(await store.backlog(), { depth: 0, oldestAgeMs: 0 });
      await store.enqueue(entry('evt_1'));
      await clock.advance(300);
      await store.enqueue(entry('evt_2'));
      await store.enqueue(entry('evt_3'));
      const [first, second] = await store.claim('a', 2, 60_000);
      await store.reschedule(first!, 60_000);
      await store.complete(second!, 'delivered');
      const { depth, oldestAgeMs } = await store.backlog();
      assert.equal(depth, 2, 'evt_1 waiting for its retry, evt_3 due');
      // A retry keeps its place: the age counts from the first enqueue (Redis's clock: bounds).
      assert.ok(oldestAgeMs >= 300 && oldestAgeMs < 5_000, String(oldestAgeMs));
      const [third] = await store.claim('a', 1, 60_000);
      await store.complete(third!, 'failed');
      assert.equal((await store.backlog()).depth, 1);
    });

    test(t, "a consumer that stops: its claim is taken over after the idle time, not before", async ({ store, clock }) => {
      await store.enqueue(entry('evt_1'));
      assert.equal((await store.claim('crashed', 1, IDLE_MS)).length, 1);
      assert.deepEqual(await store.claim('b', 1, IDLE_MS), []);
      await clock.advance(IDLE_MS + 100);
      const [taken] = await store.claim('b', 1, IDLE_MS);
      assert.equal(taken?.eventId, 'evt_1');
      await store.complete(taken!, 'delivered');
    });

    test(t, 'a consumer whose claim was taken over can no longer finish the entry: it is the new claimer\'s', async ({ store, clock }) => {
      await store.enqueue(entry('evt_1'));
      const [stale] = await store.claim('a', 1, IDLE_MS);
      await clock.advance(IDLE_MS + 100);
      const [taken] = await store.claim('b', 1, IDLE_MS);
      assert.equal(taken?.eventId, 'evt_1');
      // The stalled consumer's attempt ends: none of it counts.
      await store.reschedule(stale!, 0);
      await store.park(stale!);
      await store.complete(stale!, 'failed');
      assert.deepEqual(await store.failed(), []);
      assert.deepEqual(await store.claim('c', 10, IDLE_MS), [], 'still b\'s, not queued again');
      await store.complete(taken!, 'delivered');
      await clock.advance(IDLE_MS + 100);
      assert.deepEqual(await store.claim('c', 10, IDLE_MS), [], 'delivered once');
      assert.equal((await store.backlog()).depth, 0);
    });

    test(t, 'a failed entry is listed as failed', async ({ store }) => {
      await store.enqueue(entry('evt_9'));
      const [claimed] = await store.claim('a', 1, IDLE_MS);
      await store.complete(claimed!, 'failed');
      assert.deepEqual(await store.failed(), ['evt_9']);
    });
  });
}
