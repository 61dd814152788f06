/**
 * Time zones for the mappings: WHMCS and FOSSBilling keep wall-clock times of their server's zone.
 * `Intl` knows every IANA zone, but its first use brings about 5 MB of ICU's zone and locale data
 * into the process's memory; UTC, the zone many servers run in, needs none of it.
 */
const UTC_NAMES = new Set(['UTC', 'Etc/UTC']);

/** True for a zone Intl accepts (IANA names and their aliases). */
export function isTimeZone(zone: string): boolean {
  if (UTC_NAMES.has(zone)) return true;
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

/** Milliseconds the zone's wall clock is ahead of UTC at the instant `utcMs` (whole seconds). */
export function zoneOffsetMs(utcMs: number, timeZone: string): number {
  if (UTC_NAMES.has(timeZone)) return 0;
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(utcMs)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  const wallAsUtc = Date.UTC(parts.year ?? 0, (parts.month ?? 1) - 1, parts.day ?? 1, parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0);
  return wallAsUtc - Math.floor(utcMs / 1000) * 1000;
}
