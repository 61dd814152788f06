/**
 * WHMCS stores "YYYY-MM-DD HH:MM:SS" in its server's local time, without a zone. v1 timestamps are
 * RFC 3339 in UTC, so the zone of that clock comes from config.
 */
import { isUtc, readDigits, zoneOffsetMs } from '../../src/backend/time-zone.js';

/** A WHMCS local date-time, already checked to be a real calendar time. */
export interface LocalDateTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/**
 * Parses "YYYY-MM-DD[ HH:MM:SS]" (or a T between); null when it is not one, or not a real date and
 * time, or before 1970. Read by character codes: a list answer holds three of these a row, and a
 * regular expression's match allocates an array and six strings each time.
 */
export function parseLocalDateTime(text: string): LocalDateTime | null {
  const DASH = 45;
  if ((text.length !== 10 && text.length !== 19) || text.charCodeAt(4) !== DASH || text.charCodeAt(7) !== DASH) return null;
  const year = readDigits(text, 0, 4);
  const month = readDigits(text, 5, 7);
  const day = readDigits(text, 8, 10);
  let hour = 0;
  let minute = 0;
  let second = 0;
  if (text.length === 19) {
    const between = text.charCodeAt(10);
    const COLON = 58;
    // A space or a T.
    if ((between !== 32 && between !== 84) || text.charCodeAt(13) !== COLON || text.charCodeAt(16) !== COLON) return null;
    hour = readDigits(text, 11, 13);
    minute = readDigits(text, 14, 16);
    second = readDigits(text, 17, 19);
  }
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return null;
  // The proleptic Gregorian calendar, as Date's; no leap seconds, as Date has none.
  const real = year >= 1970 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month) && hour <= 23 && minute <= 59 && second <= 59;
  return real ? { year, month, day, hour, minute, second } : null;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * RFC 3339 UTC for a wall-clock time in `timeZone`. Around a DST change the answer depends on the
 * side of UTC: where the zone is at or ahead of UTC, a time skipped by the change moves forward by
 * it and a repeated one (clocks set back) takes its second occurrence; where it is behind UTC, a
 * skipped time moves back by it and a repeated one takes its first occurrence.
 */
export function localToUtc(local: LocalDateTime, timeZone: string): string {
  // A real calendar time (parseLocalDateTime's) on a UTC clock is already the answer.
  if (isUtc(timeZone)) return `${localDate(local)}T${twoDigits(local.hour)}:${twoDigits(local.minute)}:${twoDigits(local.second)}Z`;
  const wallAsUtc = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
  const firstGuess = wallAsUtc - zoneOffsetMs(wallAsUtc, timeZone);
  const utcMs = wallAsUtc - zoneOffsetMs(firstGuess, timeZone);
  return new Date(utcMs).toISOString().replace('.000Z', 'Z');
}

/**
 * The date part, "YYYY-MM-DD" (a LocalDateTime's year has four digits: parseLocalDateTime's), built
 * as one string: a list row has two of these.
 */
export function localDate(local: LocalDateTime): string {
  return `${local.year}-${twoDigits(local.month)}-${twoDigits(local.day)}`;
}

function twoDigits(value: number): string {
  return value < 10 ? `0${value}` : String(value);
}
