/**
 * A WHMCS wall-clock time that its zone skipped (clocks set forward) must not become an
 * instant before the times around it. West of UTC the conversion moved such a time back by the
 * change: in America/Santiago, whose clocks go from 00:00 to 01:00 on 8 September 2024, a payment
 * stamped "2024-09-08 00:00:00" (a date-only entry) became 23:00 on the 7th, an hour before a
 * payment stamped "2024-09-07 23:59:59"; in New York "02:30" on 10 March 2024 became 01:30 EST.
 * The same wall-clock minute, ordered after the real times before it. One rule in every zone now (as java.time and Temporal's "compatible"): a skipped time moves
 * forward by the change, a repeated time takes its earlier occurrence.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { type LocalDateTime, localToUtc, zoneOffsetMs } from '../../src/backend/time-zone.js';
import { CTX, CUSTOMER, FakeWhmcs } from '../mappings/whmcs/fake-whmcs.js';
import * as answers from '../mappings/whmcs/fixtures/answers.js';

function local(text: string): LocalDateTime {
  const [year, month, day, hour, minute, second] = text.split(/[- :]/).map(Number) as [number, number, number, number, number, number];
  return { year, month, day, hour, minute, second };
}

/** The wall date the instant shows in `zone`. */
const wallDate = (utc: string, zone: string): string => {
  const at = Date.parse(utc);
  return new Date(at + zoneOffsetMs(at, zone)).toISOString().slice(0, 10);
};

t.test('a skipped wall time moves forward by the change, east and west of UTC', async () => {
  // Santiago (-04 → -03 at 04:00Z on 8 September 2024): midnight never shows; 01:00 -03 is 04:00Z.
  assert.equal(localToUtc(local('2024-09-08 00:00:00'), 'America/Santiago'), '2024-09-08T04:00:00Z');
  assert.equal(localToUtc(local('2024-09-08 00:30:00'), 'America/Santiago'), '2024-09-08T04:30:00Z');
  // New York (EST → EDT at 07:00Z on 10 March 2024): 02:30 never shows; 03:30 EDT is 07:30Z.
  assert.equal(localToUtc(local('2024-03-10 02:30:00'), 'America/New_York'), '2024-03-10T07:30:00Z');
  // Berlin (east of UTC) already did: 02:30 on 31 March 2024 is 03:30 CEST.
  assert.equal(localToUtc(local('2024-03-31 02:30:00'), 'Europe/Berlin'), '2024-03-31T01:30:00Z');
});

t.test('a repeated wall time takes its earlier occurrence, east and west of UTC', async () => {
  assert.equal(localToUtc(local('2024-11-03 01:30:00'), 'America/New_York'), '2024-11-03T05:30:00Z');
  assert.equal(localToUtc(local('2024-10-27 02:30:00'), 'Europe/Berlin'), '2024-10-27T00:30:00Z');
  // Santiago sets its clocks back at 03:00Z on 6 April 2024: 23:30 on the 6th shows twice.
  assert.equal(localToUtc(local('2024-04-06 23:30:00'), 'America/Santiago'), '2024-04-07T02:30:00Z');
});

t.test('a skipped wall time never comes out before the real wall times that precede it (every minute of the change days)', async () => {
  const days: Array<[string, string]> = [
    ['America/Santiago', '2024-09-07'],
    ['America/Santiago', '2024-09-08'],
    ['America/New_York', '2024-03-10'],
    ['Europe/Berlin', '2024-03-31'],
    ['America/Havana', '2024-03-10'],
    ['America/Asuncion', '2024-10-06'],
  ];
  for (const [zone, day] of days) {
    let lastReal = Number.NEGATIVE_INFINITY;
    for (let minute = 0; minute < 24 * 60; minute += 1) {
      const text = `${day} ${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}:00`;
      const at = Date.parse(localToUtc(local(text), zone));
      assert.ok(at >= lastReal, `${text} in ${zone} came out before a real wall time earlier that day`);
      const shown = new Date(at + zoneOffsetMs(at, zone)).toISOString().slice(0, 19).replace('T', ' ');
      if (shown === text) lastReal = Math.max(lastReal, at);
      else assert.ok(shown > text, `${text} in ${zone}, which never shows, moved back to ${shown}`);
    }
  }
});

t.test('/v1/billing/invoices: a payment stamped at a skipped midnight is paid on that day, not the day before', async (t) => {
  const whmcs = new FakeWhmcs();
  t.teardown(() => whmcs.close());
  const row = { ...answers.invoiceRow, status: 'Paid', date: '2024-09-08', duedate: '2024-09-08', datepaid: '2024-09-08 00:00:00' };
  whmcs.answer('GetInvoices', { ...answers.invoices, invoices: { invoice: [row] } });
  const { items } = await whmcs.backend({ timeZone: 'America/Santiago' }).listInvoices(CUSTOMER, { page: 1, perPage: 25 }, CTX);
  const paidAt = items[0]?.paid_at ?? '';
  assert.equal(paidAt, '2024-09-08T04:00:00Z');
  assert.equal(wallDate(paidAt, 'America/Santiago'), '2024-09-08', 'paid_at shows the day WHMCS stamped');
});
