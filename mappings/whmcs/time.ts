/**
 * WHMCS stores "YYYY-MM-DD HH:MM:SS" in its server's local time, without a zone. v1 timestamps are
 * RFC 3339 in UTC, so the zone of that clock comes from config.
 */

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

/** Milliseconds the zone's wall clock is ahead of UTC at the instant `utcMs`. */
function zoneOffsetMs(utcMs: number, timeZone: string): number {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(utcMs)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  const wallAsUtc = Date.UTC(parts.year ?? 0, (parts.month ?? 1) - 1, parts.day ?? 1, parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0);
  return wallAsUtc - Math.floor(utcMs / 1000) * 1000;
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
