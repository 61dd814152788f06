/**
 * The mappings' time zones: UTC answered without Intl (whose zone data costs memory), every other
 * zone through Intl, with the same answers either way.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { isTimeZone, zoneOffsetMs } from '../../src/backend/time-zone.js';

const HOUR_MS = 3_600_000;
const WINTER = Date.UTC(2026, 0, 15, 12, 0, 0);
const SUMMER = Date.UTC(2026, 6, 15, 12, 0, 0);

/** The offset as Intl computes it, for comparison with the shortcut. */
function intlOffsetMs(utcMs: number, timeZone: string): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' })
      .formatToParts(utcMs)
      .filter((part) => part.type !== 'literal')
      .map((part) => [part.type, Number(part.value)]),
  ) as Record<string, number>;
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!) - utcMs;
}

t.test('time zones', async (t) => {
  t.test('IANA names and UTC are zones; anything else is not', async () => {
    for (const zone of ['UTC', 'Etc/UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata']) assert.ok(isTimeZone(zone), zone);
    for (const zone of ['Mars/Olympus', '', 'UTC+2', 'Europe/']) assert.ok(!isTimeZone(zone), zone);
  });

  t.test('UTC has no offset, as Intl says', async () => {
    for (const at of [WINTER, SUMMER, 0, Date.UTC(2038, 0, 19, 3, 14, 8)]) {
      assert.equal(zoneOffsetMs(at, 'UTC'), 0);
      assert.equal(zoneOffsetMs(at, 'Etc/UTC'), 0);
      assert.equal(intlOffsetMs(at, 'UTC'), 0);
    }
  });

  t.test('other zones take their offset at the instant, daylight saving included', async () => {
    assert.equal(zoneOffsetMs(WINTER, 'Europe/Berlin'), HOUR_MS);
    assert.equal(zoneOffsetMs(SUMMER, 'Europe/Berlin'), 2 * HOUR_MS);
    assert.equal(zoneOffsetMs(WINTER, 'America/New_York'), -5 * HOUR_MS);
    assert.equal(zoneOffsetMs(SUMMER, 'Asia/Kolkata'), 5.5 * HOUR_MS);
    for (const zone of ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe']) {
      for (const at of [WINTER, SUMMER]) assert.equal(zoneOffsetMs(at, zone), intlOffsetMs(at, zone), `${zone} at ${at}`);
    }
  });
});
