/**
 * The WHMCS field types read their common forms in one step and leave the rest to the same type
 * written as plain zod (mappings/whmcs/parse-fields.ts). Here every one-step type is held to its plain
 * twin over a table of values: the same acceptance, the same output, the same issues (as the
 * operator log shows them), alone and as a field of an object (present, absent, and as a list).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { z } from 'zod';
import * as fields from '../../../mappings/whmcs/parse-fields.js';
import { describeIssues, plain } from '../../../mappings/whmcs/parse-fields.js';
import { parseLocalDateTime } from '../../../mappings/whmcs/time.js';

const NUMBERS = [0, -0, 1, -1, 2, 7, 1.5, -2.25, 0.1, 1e-7, 15.95, 99.999, 1e21, 1e300, -1e300, 123456789012345, 1234567890123456, 2 ** 53 - 1, 2 ** 53, -(2 ** 53 - 1), -(2 ** 53), 0.30000000000000004];
const STRINGS = [
  '', ' ', '0', '1', '2', '007', '-1', '-0', ' 12 ', '\t3\n', '12a', '1.5', '1e3', '0x10', '+1', '١٢',
  '123456789012345', '1234567890123456', '12345678901234567', '9007199254740991', '9007199254740992', '-9007199254740993',
  '15.95', '15.9', '15', '15.000', '15.10', '15.50', '-1.00', '0.00', '0.000', '.5', '5.', '1.123456789', '1.12345678',
  ' 15.95 ', '1,000.00', '123456789012345.12', '1234567890123456.1', '-0.00',
  'abc', 'A &amp; B', '&lt;b&gt;', '&#039;x&#039;', 'Unpaid', 'on', 'true', 'false', 'off', 'null', 'yes',
  '2016-01-01', '2016-01-01 12:34:56', '2016-01-01T12:34:56', ' 2016-01-01 ', '2016-02-29', '2015-02-29', '2000-02-29',
  '2100-02-29', '2016-04-31', '2016-04-30', '2016-13-01', '2016-00-10', '2016-01-00', '2016-01-32', '1969-12-31',
  '1970-01-01 00:00:00', '2016-01-01 24:00:00', '2016-01-01 23:59:59', '2016-01-01 23:60:00', '2016-01-01 23:59:60',
  '0000-00-00', '0000-00-00 00:00:00', '0000-00-00x', '2016-1-1', '2016-01-01 1:2:3', '9999-12-31 23:59:59',
];
const OTHERS: unknown[] = [null, undefined, true, false, {}, [], [1], { a: 1 }];
const VALUES: unknown[] = [...NUMBERS, ...STRINGS, ...OTHERS];

const ONE_STEP = {
  Count: fields.Count,
  Id: fields.Id,
  OptionalId: fields.OptionalId,
  Decimal: fields.Decimal,
  Text: fields.Text,
  TextOrNone: fields.TextOrNone,
  RawText: fields.RawText,
  LocalTime: fields.LocalTime,
  Flag: fields.Flag,
} satisfies Partial<Record<keyof typeof plain, z.ZodType>>;

/** What a parse shows: its output, or its issues as the log and the code see them. */
function outcome(schema: z.ZodType, value: unknown) {
  const result = schema.safeParse(value);
  if (result.success) return { success: true, data: result.data };
  return {
    success: false,
    described: describeIssues(result.error.issues, 20),
    issues: result.error.issues.map(({ code, path, message }) => ({ code, path, message })),
  };
}

const show = (value: unknown): string => (value === undefined ? 'undefined' : Object.is(value, -0) ? '-0' : JSON.stringify(value));

/** Same outcome, with -0 told apart from 0 (assert's deepEqual would let it pass). */
function assertSame(actual: ReturnType<typeof outcome>, expected: ReturnType<typeof outcome>, label: string): void {
  assert.deepStrictEqual(actual, expected, label);
  if (actual.success && typeof actual.data === 'number') assert.ok(Object.is(actual.data, (expected as { data: unknown }).data), `${label}: -0`);
}

t.test('each one-step field type agrees with its plain twin on every value', async (t) => {
  for (const [name, oneStep] of Object.entries(ONE_STEP)) {
    t.test(name, async () => {
      const twin = plain[name as keyof typeof ONE_STEP];
      let accepted = 0;
      for (const value of VALUES) {
        const expected = outcome(twin, value);
        if (expected.success) accepted += 1;
        assertSame(outcome(oneStep, value), expected, `${name}(${show(value)})`);
      }
      // The table reaches both sides of each type.
      assert.ok(accepted > 0 && accepted < VALUES.length, `${name} accepts ${accepted} of ${VALUES.length}`);
    });
  }
});

t.test('as fields of an object: present, absent, optional, and in a list', async (t) => {
  for (const [name, oneStep] of Object.entries(ONE_STEP)) {
    t.test(name, async () => {
      const twin = plain[name as keyof typeof ONE_STEP];
      const shapes: Array<[string, (type: z.ZodType) => z.ZodType]> = [
        ['required', (type) => z.object({ field: type, other: z.string() })],
        ['optional', (type) => z.object({ field: type.optional() })],
        ['listed', (type) => z.object({ rows: z.array(z.object({ field: type })) })],
      ];
      for (const [shapeName, shape] of shapes) {
        const mine = shape(oneStep);
        const reference = shape(twin);
        for (const value of VALUES) {
          const input = shapeName === 'listed' ? { rows: [{ field: 1 }, { field: value }] } : { field: value, other: 'x' };
          assertSame(outcome(mine, input), outcome(reference, input), `${name} ${shapeName} (${show(value)})`);
        }
        const absent = shapeName === 'listed' ? { rows: [{}] } : { other: 'x' };
        assertSame(outcome(mine, absent), outcome(reference, absent), `${name} ${shapeName}, absent`);
      }
    });
  }
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

t.test('a local date-time is real exactly when Date round-trips it (from 1970)', async () => {
  const viaDate = (year: number, month: number, day: number, hour: number, minute: number, second: number): boolean => {
    const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
    const roundTrips = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
      && date.getUTCHours() === hour && date.getUTCMinutes() === minute && date.getUTCSeconds() === second;
    return roundTrips && year >= 1970;
  };
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
