/**
 * WHMCS stores "YYYY-MM-DD HH:MM:SS" in its server's local time, without a zone. v1 timestamps are
 * RFC 3339 in UTC, so the zone of that clock comes from config (localToUtc in
 * src/backend/time-zone.ts, shared with FOSSBilling).
 */
import { isRealLocalTime, type LocalDateTime, readDigits } from '../../src/backend/time-zone.js';

export type { LocalDateTime };

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
  const local = { year, month, day, hour, minute, second };
  // readDigits' -1 (not digits) is out of every range.
  return isRealLocalTime(local) ? local : null;
}
