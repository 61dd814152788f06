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

/** Parses "YYYY-MM-DD[ HH:MM:SS]"; null when it is not a real date and time. */
export function parseLocalDateTime(text: string): LocalDateTime | null {
  const match = LOCAL_DATE_TIME.exec(text);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1).map((part) => Number(part ?? '0')) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const asUtc = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  const roundTrips =
    asUtc.getUTCFullYear() === year &&
    asUtc.getUTCMonth() === month - 1 &&
    asUtc.getUTCDate() === day &&
    asUtc.getUTCHours() === hour &&
    asUtc.getUTCMinutes() === minute &&
    asUtc.getUTCSeconds() === second;
  return roundTrips && year >= 1970 ? { year, month, day, hour, minute, second } : null;
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
