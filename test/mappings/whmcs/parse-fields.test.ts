/**
 * The WHMCS field types read their common forms in one step and leave the rest to the same type
 * written as plain zod (mappings/whmcs/parse-fields.ts). Here every one-step type is held to its plain
 * twin over a table of values (test/helpers/one-step-fields.ts), and the shared readers to what
 * they must give.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import * as fields from '../../../mappings/whmcs/parse-fields.js';
import { describeIssues, plain } from '../../../mappings/whmcs/parse-fields.js';
import { parseLocalDateTime } from '../../../mappings/whmcs/time.js';
import { FIELD_VALUES, holdToPlainTwins } from '../../helpers/one-step-fields.js';


holdToPlainTwins(t, {
  Count: [fields.Count, plain.Count],
  Id: [fields.Id, plain.Id],
  OptionalId: [fields.OptionalId, plain.OptionalId],
  Decimal: [fields.Decimal, plain.Decimal],
  Text: [fields.Text, plain.Text],
  TextOrNone: [fields.TextOrNone, plain.TextOrNone],
  RawText: [fields.RawText, plain.RawText],
  AnyString: [fields.AnyString, plain.AnyString],
  LocalTime: [fields.LocalTime, plain.LocalTime],
  Flag: [fields.Flag, plain.Flag],
}, FIELD_VALUES);

t.test('the log describes a refusal as before: the first branch of a union', async () => {
  assert.equal(describeIssues(fields.Id.safeParse('abc').error?.issues ?? []), '(root): Invalid input: expected number, received string');
  assert.equal(describeIssues(fields.Decimal.safeParse('1e400').error?.issues ?? []), '(root): not a decimal amount');
  assert.equal(describeIssues(fields.LocalTime.safeParse('2016-02-30').error?.issues ?? []), '(root): not a date');
});

t.test('what the shared readers give: decimals with two places at least, local times, ids as text', async () => {
  const decimals: Array<[unknown, string]> = [
    ['15', '15.00'], [15, '15.00'], ['15.000', '15.00'], ['15.10', '15.10'], ['15.5', '15.50'], [0, '0.00'], ['0.000', '0.00'],
    ['1.12345678', '1.12345678'], ['1.12345600', '1.123456'], ['-1.00', '-1.00'], [15.95, '15.95'], [' 9.99 ', '9.99'], ['100', '100.00'],
  ];
  for (const [input, output] of decimals) assert.equal(fields.Decimal.parse(input), output, String(input));
  assert.deepEqual(fields.LocalTime.parse('2016-01-08 14:06:34'), { year: 2016, month: 1, day: 8, hour: 14, minute: 6, second: 34 });
  assert.equal(fields.LocalTime.parse('0000-00-00'), null);
  assert.equal(fields.Id.parse(7), '7');
  assert.equal(fields.Id.parse('007'), '7');
  assert.equal(fields.OptionalId.parse('0'), null);
  assert.equal(fields.TextOrNone.parse('A &amp; B'), 'A & B');
  assert.equal(fields.RawText.parse('p&amp;ss'), 'p&amp;ss');
});

/** Whether Date round-trips these parts (a real date and time), from 1970. */
function viaDate(year: number, month: number, day: number, hour: number, minute: number, second: number): boolean {
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  const roundTrips = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
    && date.getUTCHours() === hour && date.getUTCMinutes() === minute && date.getUTCSeconds() === second;
  return roundTrips && year >= 1970;
}

t.test('a local date-time is read as the pattern YYYY-MM-DD[( |T)HH:MM:SS] reads it', async () => {
  const PATTERN = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2}):(\d{2}))?$/;
  const byPattern = (text: string): number[] | null => PATTERN.exec(text)?.slice(1).map((part) => Number(part ?? '0')) ?? null;
  const parts = (parsed: ReturnType<typeof parseLocalDateTime>) => (parsed ? [parsed.year, parsed.month, parsed.day, parsed.hour, parsed.minute, parsed.second] : null);
  const swaps = ['0', '9', '-', ' ', 'T', 't', ':', '/', 'a', '\u0663', '+', '.'];
  let checked = 0;
  for (const base of ['2016-02-29 12:34:56', '2024-12-31T23:59:59', '2000-01-01']) {
    const variants = [base, base.slice(1), `${base}0`, `${base} `, ` ${base}`, base.slice(0, 16)];
    for (let at = 0; at < base.length; at += 1) for (const swap of swaps) variants.push(base.slice(0, at) + swap + base.slice(at + 1));
    for (const text of variants) {
      const expected = byPattern(text);
      const parsed = parts(parseLocalDateTime(text));
      // The pattern decides the form, Date the calendar.
      const [year, month, day, hour, minute, second] = expected ?? [];
      const real = expected !== null && viaDate(year as number, month as number, day as number, hour as number, minute as number, second as number);
      assert.deepEqual(parsed, real ? expected : null, text);
      checked += 1;
    }
  }
  assert.ok(checked > 500);
});

t.test('a local date-time is real exactly when Date round-trips it (from 1970)', async () => {
  const pad = (value: number, width = 2): string => String(value).padStart(width, '0');
  let checked = 0;
  for (const year of [0, 99, 1900, 1968, 1969, 1970, 1971, 1999, 2000, 2001, 2004, 2023, 2024, 2100, 2400, 9999]) {
    for (let month = 0; month <= 13; month += 1) {
      for (const day of [0, 1, 15, 28, 29, 30, 31, 32]) {
        for (const [hour, minute, second] of [[0, 0, 0], [23, 59, 59], [24, 0, 0], [12, 60, 0], [12, 0, 60]] as const) {
          const text = `${pad(year, 4)}-${pad(month)}-${pad(day)} ${pad(hour)}:${pad(minute)}:${pad(second)}`;
          const parsed = parseLocalDateTime(text);
          assert.equal(parsed !== null, viaDate(year, month, day, hour, minute, second), text);
          if (parsed) assert.deepEqual(parsed, { year, month, day, hour, minute, second });
          checked += 1;
        }
      }
    }
  }
  assert.ok(checked > 8_000);
  assert.deepEqual(parseLocalDateTime('2024-02-29'), { year: 2024, month: 2, day: 29, hour: 0, minute: 0, second: 0 });
  assert.equal(parseLocalDateTime('2024-02-29 12:00'), null);
});
