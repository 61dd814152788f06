/**
 * The mappings' time zones: UTC answered without Intl (whose zone data costs memory), every other
 * zone through Intl, with the same answers either way; an hour's offset remembered only when it held
 * all hour long. A server's wall-clock time becomes UTC the same way for both mappings, on DST change
 * days too.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { isRealLocalTime, isTimeZone, type LocalDateTime, localToUtc, wallClockAsUtc, wallClockOffsetMs, zoneOffsetMs } from '../../src/backend/time-zone.js';

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
    assert.equal(wallClockOffsetMs(SUMMER, 'Europe/Berlin'), 2 * HOUR_MS);
    assert.equal(wallClockOffsetMs(WINTER, 'Asia/Kathmandu'), 5.75 * HOUR_MS);
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
    assert.equal(wallClockOffsetMs(SUMMER, 'Europe/Berlin'), 2 * HOUR_MS);
    assert.equal(wallClockOffsetMs(WINTER, 'America/St_Johns'), -3.5 * HOUR_MS);
  });

  t.test('around every transition of zones with odd ones, each minute and second has its own offset, first time and again', async () => {
    // Daylight saving both ways; half-hour shifts (Lord Howe); a quarter-hour zone made (Kathmandu
    // 1986); offsets of whole seconds (Amsterdam until 1937); a day skipped (Apia 2011); changes at
    // odd times (Caracas 2007, 2016); Ramadan suspensions (Casablanca); +0/+2 (Troll).
    const cases: Array<[string, number]> = [
      ['Europe/Berlin', 2026], ['America/New_York', 2026], ['Australia/Lord_Howe', 2026], ['Asia/Kathmandu', 1986],
      ['Europe/Amsterdam', 1937], ['Pacific/Apia', 2011], ['America/Caracas', 2007], ['America/Caracas', 2016],
      ['Africa/Casablanca', 2026], ['Antarctica/Troll', 2026],
    ];
    const DAY_MS = 24 * HOUR_MS;
    let transitions = 0;
    for (const [zone, year] of cases) {
      for (let day = Date.UTC(year, 0, 1); day < Date.UTC(year + 1, 0, 1); day += DAY_MS) {
        if (intlOffsetMs(day, zone) === intlOffsetMs(day + DAY_MS, zone)) continue;
        // The transition's second, by halving the day.
        let [before, after] = [day, day + DAY_MS];
        while (after - before > 1000) {
          const middle = before + Math.floor((after - before) / 2000) * 1000;
          if (intlOffsetMs(middle, zone) === intlOffsetMs(day, zone)) before = middle;
          else after = middle;
        }
        transitions += 1;
        const hour = Math.floor(after / HOUR_MS) * HOUR_MS;
        const instants = [after - 1000, after, after + 1000];
        for (let at = hour - HOUR_MS; at < hour + 2 * HOUR_MS; at += 60_000) instants.push(at, at + 59_000);
        // Twice: the first call reads the hour, the second may take what the first remembered.
        for (const round of [1, 2]) {
          for (const at of instants) assert.equal(zoneOffsetMs(at, zone), intlOffsetMs(at, zone), `${zone} at ${new Date(at).toISOString()}, round ${round}`);
        }
      }
    }
    assert.ok(transitions >= 16, `${transitions} transitions found`);
  });

  t.test('an hour read once is not formatted again; an hour with a transition is, at each instant', async (t) => {
    const format = Object.getOwnPropertyDescriptor(Intl.DateTimeFormat.prototype, 'format') as PropertyDescriptor;
    let formats = 0;
    Object.defineProperty(Intl.DateTimeFormat.prototype, 'format', {
      configurable: true,
      get(this: Intl.DateTimeFormat) {
        const bound = (format.get as () => (date?: Date | number) => string).call(this);
        return (date?: Date | number) => {
          formats += 1;
          return bound(date);
        };
      },
    });
    t.teardown(() => {
      Object.defineProperty(Intl.DateTimeFormat.prototype, 'format', format);
    });
    const counted = (at: number, zone: string): [number, number] => {
      const before = formats;
      const offset = zoneOffsetMs(at, zone);
      return [offset, formats - before];
    };
    // An hour of Chatham's (+12:45) never read: its first and last second, then nothing.
    const quiet = Date.UTC(2031, 4, 6, 7, 0, 0);
    assert.deepEqual(counted(quiet + 1_234_000, 'Pacific/Chatham'), [12.75 * HOUR_MS, 2]);
    assert.deepEqual(counted(quiet + 3_599_000, 'Pacific/Chatham'), [12.75 * HOUR_MS, 0]);
    assert.deepEqual(counted(quiet, 'Pacific/Chatham'), [12.75 * HOUR_MS, 0]);
    // Berlin's clocks go back at 01:00 UTC on 31 October 2027 (a year no test here read before): the
    // hour before is whole, and so is the hour from it. Lord Howe's clocks go forward half an hour at
    // 15:30 UTC on 3 October 2026, inside an hour, which is read at each instant, every time.
    assert.deepEqual(counted(Date.UTC(2027, 9, 31, 0, 59, 59), 'Europe/Berlin'), [2 * HOUR_MS, 2]);
    assert.deepEqual(counted(Date.UTC(2027, 9, 31, 1, 0, 0), 'Europe/Berlin'), [HOUR_MS, 2]);
    assert.deepEqual(counted(Date.UTC(2027, 9, 31, 1, 30, 0), 'Europe/Berlin'), [HOUR_MS, 0]);
    const inside = Date.UTC(2026, 9, 3, 15, 0, 0);
    for (const round of [1, 2]) {
      assert.deepEqual(counted(inside + 10 * 60_000, 'Australia/Lord_Howe'), [10.5 * HOUR_MS, 3], `round ${round}`);
      assert.deepEqual(counted(inside + 40 * 60_000, 'Australia/Lord_Howe'), [11 * HOUR_MS, 3], `round ${round}`);
    }
  });

  t.test('hours far apart that share a slot each keep their own offset', async () => {
    // More consecutive hours than are remembered, twice over: each hour evicts the one a slot-count earlier.
    const from = Date.UTC(2025, 0, 1, 0, 30);
    for (const round of [1, 2]) {
      for (let hour = 0; hour < 3_000; hour += 1) {
        const at = from + hour * HOUR_MS;
        assert.equal(zoneOffsetMs(at, 'America/New_York'), intlOffsetMs(at, 'America/New_York'), `round ${round}, ${new Date(at).toISOString()}`);
      }
    }
  });

  t.test('a formatted text of another layout is not read (formatToParts decides then)', async () => {
    assert.equal(wallClockAsUtc('3/15/2024, 11:20:30'), Date.UTC(2024, 2, 15, 11, 20, 30));
    assert.equal(wallClockAsUtc('12/31/1969, 23:15:30'), Date.UTC(1969, 11, 31, 23, 15, 30));
    for (const text of ['', '3/15/2024 11:20:30', '3/15/2024, 11:20', '3/15/2024, 1:20:30 PM', '15.3.2024, 11:20:30', '2024-03-15, 11:20:30', '3/15/20245, 11:20:30', '3//2024, 11:20:30', '/15/2024, 11:20:30', '3/15/, 11:20:30', '3/15/2024, 11-20-30', '3/15/2024, 11:20-30', '1/2/3, 4', '//, 11:20:30', '3/15/2024, 1a:20:30', '3/15/2024; 11:20:30', '٣/15/2024, 11:20:30']) {
      assert.ok(Number.isNaN(wallClockAsUtc(text)), JSON.stringify(text));
    }
  });
});

/** "YYYY-MM-DD HH:MM:SS" as a LocalDateTime. */
function local(text: string): LocalDateTime {
  const [year, month, day, hour, minute, second] = text.split(/[- :]/).map(Number) as [number, number, number, number, number, number];
  return { year, month, day, hour, minute, second };
}

t.test('server wall-clock times to UTC', async (t) => {
  t.test('on DST change days, a time before or after the change takes the offset it was shown with', async () => {
    const cases: Array<[string, string, string]> = [
      // Europe/Berlin: CET → CEST at 01:00Z on 31 March 2024, CEST → CET at 01:00Z on 27 October.
      ['Europe/Berlin', '2024-03-31 01:30:00', '2024-03-31T00:30:00Z'],
      ['Europe/Berlin', '2024-03-31 03:30:00', '2024-03-31T01:30:00Z'],
      ['Europe/Berlin', '2024-10-27 01:30:00', '2024-10-26T23:30:00Z'],
      ['Europe/Berlin', '2024-10-27 03:30:00', '2024-10-27T02:30:00Z'],
      // America/New_York: EST → EDT at 07:00Z on 10 March 2024, EDT → EST at 06:00Z on 3 November.
      ['America/New_York', '2024-03-10 01:30:00', '2024-03-10T06:30:00Z'],
      ['America/New_York', '2024-03-10 04:00:00', '2024-03-10T08:00:00Z'],
      ['America/New_York', '2024-03-10 06:30:00', '2024-03-10T10:30:00Z'],
      ['America/New_York', '2024-11-03 00:30:00', '2024-11-03T04:30:00Z'],
      ['America/New_York', '2024-11-03 03:00:00', '2024-11-03T08:00:00Z'],
    ];
    for (const [zone, wall, utc] of cases) assert.equal(localToUtc(local(wall), zone), utc, `${wall} in ${zone}`);
  });

  t.test('a repeated time takes its earlier occurrence, east and west of UTC', async () => {
    // 02:30 in Berlin on 27 October 2024 is 00:30Z (CEST) and 01:30Z (CET).
    assert.equal(localToUtc(local('2024-10-27 02:30:00'), 'Europe/Berlin'), '2024-10-27T00:30:00Z');
    // 01:30 in New York on 3 November 2024 is 05:30Z (EDT) and 06:30Z (EST).
    assert.equal(localToUtc(local('2024-11-03 01:30:00'), 'America/New_York'), '2024-11-03T05:30:00Z');
  });

  t.test('a skipped time moves forward by the change, east and west of UTC', async () => {
    // 02:30 never shows in Berlin on 31 March 2024: 01:30Z, which shows 03:30 CEST.
    assert.equal(localToUtc(local('2024-03-31 02:30:00'), 'Europe/Berlin'), '2024-03-31T01:30:00Z');
    // 02:30 never shows in New York on 10 March 2024: 07:30Z, which shows 03:30 EDT.
    assert.equal(localToUtc(local('2024-03-10 02:30:00'), 'America/New_York'), '2024-03-10T07:30:00Z');
  });

  t.test('every quarter hour of a year: the answer is an instant that shows that wall time, the only one when there is one', async () => {
    for (const zone of ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe']) {
      for (let at = Date.UTC(2024, 0, 1); at < Date.UTC(2025, 0, 1); at += 15 * 60_000) {
        const wall = new Date(at + zoneOffsetMs(at, zone));
        const text = wall.toISOString().slice(0, 19).replace('T', ' ');
        const answer = Date.parse(localToUtc(local(text), zone));
        assert.equal(answer + zoneOffsetMs(answer, zone), wall.getTime(), `${text} in ${zone}`);
        // Only a wall time shown by another instant within an hour (half an hour at Lord Howe) may answer otherwise.
        const twin = [at - HOUR_MS, at - HOUR_MS / 2, at + HOUR_MS / 2, at + HOUR_MS].some((other) => other + zoneOffsetMs(other, zone) === wall.getTime());
        if (!twin) assert.equal(answer, at, `${text} in ${zone}`);
      }
    }
  });

  t.test('only real calendar times from 1970 on are local times', async () => {
    for (const text of ['1970-01-01 00:00:00', '2024-02-29 23:59:59', '2000-02-29 12:00:00', '9999-12-31 23:59:59']) assert.ok(isRealLocalTime(local(text)), text);
    for (const text of ['1969-12-31 23:59:59', '0000-00-00 00:00:00', '0099-01-01 00:00:00', '2023-02-29 00:00:00', '2100-02-29 00:00:00', '2024-04-31 00:00:00', '2024-13-01 00:00:00', '2024-00-10 00:00:00', '2024-01-00 00:00:00', '2024-01-01 24:00:00', '2024-01-01 23:60:00', '2024-01-01 23:59:60']) {
      assert.ok(!isRealLocalTime(local(text)), text);
    }
    assert.ok(!isRealLocalTime({ year: 2024, month: 1, day: 1, hour: -1, minute: 0, second: 0 }));
  });
});
