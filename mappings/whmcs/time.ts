/**
 * WHMCS stores "YYYY-MM-DD HH:MM:SS" in its server's local time, without a zone. v1 timestamps are
 * RFC 3339 in UTC, so the zone of that clock comes from config.
 */
import { zoneOffsetMs } from '../../src/backend/time-zone.js';

/** A WHMCS local date-time, already checked to be a real calendar time. */
export interface LocalDateTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const LOCAL_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2}):(\d{2}))?$/;

/** Parses "YYYY-MM-DD[ HH:MM:SS]"; null when it is not a real date and time (or before 1970). */
export function parseLocalDateTime(text: string): LocalDateTime | null {
  const match = LOCAL_DATE_TIME.exec(text);
  if (!match) return null;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  const hour = match[4] === undefined ? 0 : Number(match[4]);
  const minute = match[5] === undefined ? 0 : Number(match[5]);
  const second = match[6] === undefined ? 0 : Number(match[6]);
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
  const wallAsUtc = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
  const firstGuess = wallAsUtc - zoneOffsetMs(wallAsUtc, timeZone);
  const utcMs = wallAsUtc - zoneOffsetMs(firstGuess, timeZone);
  return new Date(utcMs).toISOString().replace('.000Z', 'Z');
}

/** The date part, "YYYY-MM-DD". */
export function localDate(local: LocalDateTime): string {
  const pad = (value: number, width: number): string => String(value).padStart(width, '0');
  return `${pad(local.year, 4)}-${pad(local.month, 2)}-${pad(local.day, 2)}`;
}
