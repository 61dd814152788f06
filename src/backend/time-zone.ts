/**
 * Time zones for the mappings: WHMCS and FOSSBilling keep wall-clock times of their server's zone.
 * `Intl` knows every IANA zone, but its first use brings about 5 MB of ICU's zone and locale data
 * into the process's memory; UTC, the zone many servers run in, needs none of it.
 */
const UTC_NAMES = new Set(['UTC', 'Etc/UTC']);

/** True for the zone whose wall clock is UTC's. */
export function isUtc(zone: string): boolean {
  return UTC_NAMES.has(zone);
}

/** True for a zone Intl accepts (IANA names and their aliases). */
export function isTimeZone(zone: string): boolean {
  if (isUtc(zone)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** Hours remembered per zone (about six weeks' worth), each in the slot its number modulo this picks. */
const HOUR_SLOTS = 1024;

/** A zone's offset by UTC hour, for the hours where it held all hour long. */
class HourlyOffsets {
  readonly hours = new Float64Array(HOUR_SLOTS).fill(Number.NaN);
  readonly offsets = new Float64Array(HOUR_SLOTS);
}

const hourlyOffsets = new Map<string, HourlyOffsets>();

/**
 * Milliseconds the zone's wall clock is ahead of UTC at the instant `utcMs` (whole seconds).
 *
 * An offset read through Intl costs a formatting (about 4 µs), and a list page of invoices made
 * 50 of them: two per time. Offsets change only at a zone's transitions, so each UTC hour is read
 * once, at its first and its last second: when the two agree, the whole hour has that offset (no
 * zone in the tz database changes twice within an hour) and it is remembered; an hour with a
 * transition in it is read at each instant, every time. Memory: 16 KB per zone, fixed.
 */
export function zoneOffsetMs(utcMs: number, timeZone: string): number {
  if (isUtc(timeZone)) return 0;
  let table = hourlyOffsets.get(timeZone);
  if (table === undefined) hourlyOffsets.set(timeZone, (table = new HourlyOffsets()));
  const hour = Math.floor(utcMs / HOUR_MS);
  const slot = hour & (HOUR_SLOTS - 1);
  if (table.hours[slot] === hour) return table.offsets[slot] as number;
  const first = wallClockOffsetMs(hour * HOUR_MS, timeZone);
  if (first !== wallClockOffsetMs(hour * HOUR_MS + HOUR_MS - 1000, timeZone)) return wallClockOffsetMs(utcMs, timeZone);
  table.hours[slot] = hour;
  table.offsets[slot] = first;
  return first;
}

/**
 * The offset at `utcMs` as Intl gives it, nothing remembered. The wall clock is read from the
 * formatter's text ("3/15/2024, 11:20:30") by character codes: half the time of formatToParts and
 * its dozen part objects. Any other text (another ICU's layout) is left to formatToParts.
 */
export function wallClockOffsetMs(utcMs: number, timeZone: string): number {
  if (isUtc(timeZone)) return 0;
  const formatter = formatterFor(timeZone);
  const fromText = wallClockAsUtc(formatter.format(utcMs));
  const wallAsUtc = Number.isNaN(fromText) ? wallClockFromParts(formatter, utcMs) : fromText;
  return wallAsUtc - Math.floor(utcMs / 1000) * 1000;
}

function wallClockFromParts(formatter: Intl.DateTimeFormat, utcMs: number): number {
  const parts: Record<string, number> = {};
  for (const part of formatter.formatToParts(utcMs)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return Date.UTC(parts.year ?? 0, (parts.month ?? 1) - 1, parts.day ?? 1, parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0);
}

/** "M/D/YYYY, HH:MM:SS" read as a UTC instant; NaN for any other text. */
export function wallClockAsUtc(text: string): number {
  const firstSlash = text.indexOf('/');
  const secondSlash = text.indexOf('/', firstSlash + 1);
  // ", HH:MM:SS" ends the text. A part missing or out of place leaves an empty or a wrong range,
  // which readDigits() refuses.
  const comma = text.length - 10;
  const COMMA = 44;
  const SPACE = 32;
  const COLON = 58;
  if (text.charCodeAt(comma) !== COMMA || text.charCodeAt(comma + 1) !== SPACE || text.charCodeAt(comma + 4) !== COLON || text.charCodeAt(comma + 7) !== COLON) {
    return Number.NaN;
  }
  const month = readDigits(text, 0, firstSlash);
  const day = readDigits(text, firstSlash + 1, secondSlash);
  const year = readDigits(text, secondSlash + 1, comma);
  const hour = readDigits(text, comma + 2, comma + 4);
  const minute = readDigits(text, comma + 5, comma + 7);
  const second = readDigits(text, comma + 8, comma + 10);
  if (month < 0 || day < 0 || year < 0 || hour < 0 || minute < 0 || second < 0) return Number.NaN;
  return Date.UTC(year, month - 1, day, hour, minute, second);
}

/**
 * The number the ASCII digits from `from` to `to` write (at least one, at most 4: a time's parts);
 * -1 when the range is not that. The mappings read their own date-times with it too.
 */
export function readDigits(text: string, from: number, to: number): number {
  if (to <= from || to - from > 4) return -1;
  let value = 0;
  for (let index = from; index < to; index += 1) {
    const code = text.charCodeAt(index) - 48;
    if (code < 0 || code > 9) return -1;
    value = value * 10 + code;
  }
  return value;
}

/** A server's wall-clock date and time, without a zone (isRealLocalTime's). */
export interface LocalDateTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/**
 * True for a real calendar time from 1970 on, in the proleptic Gregorian calendar as Date's (no
 * leap seconds, as Date has none). Earlier ones are placeholders in both billing systems, and Date
 * would read years below 100 as 19xx.
 */
export function isRealLocalTime({ year, month, day, hour, minute, second }: LocalDateTime): boolean {
  return year >= 1970 && year <= 9999 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month) && hour >= 0 && hour <= 23 && minute >= 0 && minute <= 59 && second >= 0 && second <= 59;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * RFC 3339 UTC for a real wall-clock time (isRealLocalTime) in `timeZone`, both mappings' one way.
 * The offsets a day before and a day after the wall time (taken as UTC) bracket any change that can
 * touch it (no offset exceeds 14 hours, and no zone changes twice within two days); where they
 * agree, that offset is the answer. Around a change, one rule in every zone (java.time's and
 * Temporal's "compatible"): a time the change skipped (clocks set forward) moves forward by it,
 * so a later wall time never gives an earlier instant; a time it repeated (clocks set back) takes
 * its earlier occurrence.
 */
export function localToUtc(local: LocalDateTime, timeZone: string): string {
  // A real calendar time on a UTC clock is already the answer.
  if (isUtc(timeZone)) return `${localDate(local)}T${twoDigits(local.hour)}:${twoDigits(local.minute)}:${twoDigits(local.second)}Z`;
  const wallAsUtc = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
  const before = zoneOffsetMs(wallAsUtc - DAY_MS, timeZone);
  const after = zoneOffsetMs(wallAsUtc + DAY_MS, timeZone);
  let utcMs = wallAsUtc - before;
  if (before !== after) {
    // Each offset gives an instant; it is one that shows the wall time when the offset holds there.
    const earlierHolds = zoneOffsetMs(utcMs, timeZone) === before;
    const later = wallAsUtc - after;
    const laterHolds = zoneOffsetMs(later, timeZone) === after;
    // Shown by both: the earlier. By the later offset only: that one. By neither (skipped): the
    // earlier offset's instant, which shows the wall time moved forward by the change.
    if (laterHolds && (!earlierHolds || later < utcMs)) utcMs = later;
  }
  return new Date(utcMs).toISOString().replace('.000Z', 'Z');
}

/**
 * The date part, "YYYY-MM-DD" (a real local time's year has four digits), built as one string: a
 * list row has two of these.
 */
export function localDate(local: LocalDateTime): string {
  return `${local.year}-${twoDigits(local.month)}-${twoDigits(local.day)}`;
}

function twoDigits(value: number): string {
  return value < 10 ? `0${value}` : String(value);
}
