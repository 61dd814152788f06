/**
 * The mappings' time zones: UTC answered without Intl (whose zone data costs memory), every other
 * zone through Intl, with the same answers either way.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { isTimeZone, wallClockAsUtc, zoneOffsetMs } from '../../src/backend/time-zone.js';

const HOUR_MS = 3_600_000;
const WINTER = Date.UTC(2026, 0, 15, 12, 0, 0);
const SUMMER = Date.UTC(2026, 6, 15, 12, 0, 0);

const referenceFormatters = new Map<string, Intl.DateTimeFormat>();

/** The offset as Intl computes it, for comparison with the shortcut. */
function intlOffsetMs(utcMs: number, timeZone: string): number {
  let formatter = referenceFormatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    referenceFormatters.set(timeZone, formatter);
  }
  const parts = Object.fromEntries(
    formatter
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

  t.test('every zone Intl knows: the offset read from the formatted text is formatToParts\' own', async () => {
    const from = Date.UTC(1970, 0, 1);
    const span = Date.UTC(2100, 0, 1) - from;
    for (const zone of Intl.supportedValuesOf('timeZone')) {
      for (let step = 0; step < 40; step += 1) {
        // Spread over the years, at odd seconds, both sides of the hour.
        const at = from + Math.floor((span * step) / 40) + step * 7_919_000 + 1_000 * step;
        assert.equal(zoneOffsetMs(at, zone), intlOffsetMs(at, zone), `${zone} at ${new Date(at).toISOString()}`);
      }
    }
  });

  t.test('the text is read without formatToParts', async (t) => {
    const formatToParts = Intl.DateTimeFormat.prototype.formatToParts;
    let calls = 0;
    Intl.DateTimeFormat.prototype.formatToParts = function (this: Intl.DateTimeFormat, date?: Date | number) {
      calls += 1;
      return formatToParts.call(this, date);
    };
    t.teardown(() => {
      Intl.DateTimeFormat.prototype.formatToParts = formatToParts;
    });
    assert.equal(zoneOffsetMs(SUMMER, 'Europe/Berlin'), 2 * HOUR_MS);
    assert.equal(zoneOffsetMs(WINTER, 'Asia/Kathmandu'), 5.75 * HOUR_MS);
    assert.equal(calls, 0);
  });

  t.test('a formatter whose text has another layout: formatToParts gives the offset', async (t) => {
    // `format` is a getter that gives a bound function.
    const prototype = Intl.DateTimeFormat.prototype;
    const descriptor = Object.getOwnPropertyDescriptor(prototype, 'format') as PropertyDescriptor;
    Object.defineProperty(prototype, 'format', {
      configurable: true,
      get(this: Intl.DateTimeFormat) {
        const format = (descriptor.get as () => (date?: Date | number) => string).call(this);
        return (date?: Date | number) => `${format(date)} (another layout)`;
      },
    });
    t.teardown(() => {
      Object.defineProperty(prototype, 'format', descriptor);
    });
    assert.equal(zoneOffsetMs(SUMMER, 'Europe/Berlin'), 2 * HOUR_MS);
    assert.equal(zoneOffsetMs(WINTER, 'America/St_Johns'), -3.5 * HOUR_MS);
  });

  t.test('a formatted text of another layout is not read (formatToParts decides then)', async () => {
    assert.equal(wallClockAsUtc('3/15/2024, 11:20:30'), Date.UTC(2024, 2, 15, 11, 20, 30));
    assert.equal(wallClockAsUtc('12/31/1969, 23:15:30'), Date.UTC(1969, 11, 31, 23, 15, 30));
    for (const text of ['', '3/15/2024 11:20:30', '3/15/2024, 11:20', '3/15/2024, 1:20:30 PM', '15.3.2024, 11:20:30', '2024-03-15, 11:20:30', '3/15/20245, 11:20:30', '3//2024, 11:20:30', '/15/2024, 11:20:30', '3/15/, 11:20:30', '3/15/2024, 11-20-30', '3/15/2024, 11:20-30', '1/2/3, 4', '//, 11:20:30', '3/15/2024, 1a:20:30', '3/15/2024; 11:20:30', '٣/15/2024, 11:20:30']) {
      assert.ok(Number.isNaN(wallClockAsUtc(text)), JSON.stringify(text));
    }
  });
});
