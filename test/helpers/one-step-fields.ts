/**
 * Holds a mapping's one-step field types (src/backend/one-step-field.ts) to their plain zod twins:
 * on every value, alone and as a field of an object (present, absent, optional, in a list), the
 * same acceptance, the same output (-0 told apart from 0) and the same issues, deeply.
 */
import assert from 'node:assert/strict';
import type { Test } from 'tap';
import { z } from 'zod';
import { readerOf, UNREAD } from '../../src/backend/one-step-field.js';

/** What a parse shows: its output, or its issues. */
function outcome(schema: z.ZodType, value: unknown) {
  const result = schema.safeParse(value);
  return result.success ? { success: true, data: result.data } : { success: false, issues: result.error.issues };
}

/** Values as upstream answers hold them (JSON), and around them: numbers, numeric, decimal, date and flag texts, and the rest. */
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
export const FIELD_VALUES: readonly unknown[] = [...NUMBERS, ...STRINGS, ...OTHERS];

const show = (value: unknown): string => (value === undefined ? 'undefined' : Object.is(value, -0) ? '-0' : JSON.stringify(value));

function assertSame(actual: ReturnType<typeof outcome>, expected: ReturnType<typeof outcome>, label: string): void {
  assert.deepStrictEqual(actual, expected, label);
  if (actual.success && typeof actual.data === 'number') assert.ok(Object.is(actual.data, (expected as { data: unknown }).data), `${label}: -0`);
}

const SHAPES: Array<[string, (type: z.ZodType) => z.ZodType, (value: unknown) => unknown, unknown]> = [
  ['required', (type) => z.object({ field: type, other: z.string() }), (value) => ({ field: value, other: 'x' }), { other: 'x' }],
  ['optional', (type) => z.object({ field: type.optional() }), (value) => ({ field: value }), {}],
  ['listed', (type) => z.object({ rows: z.array(z.object({ field: type })) }), (value) => ({ rows: [{ field: 1 }, { field: value }] }), { rows: [{}] }],
];

export function holdToPlainTwins(t: Test, pairs: Record<string, [oneStep: z.ZodType, plain: z.ZodType]>, values: readonly unknown[]): void {
  t.test('each one-step field type agrees with its plain twin on every value', async (t) => {
    for (const [name, [oneStep, twin]] of Object.entries(pairs)) {
      t.test(name, async () => {
        let accepted = 0;
        for (const value of values) {
          const expected = outcome(twin, value);
          if (expected.success) accepted += 1;
          assertSame(outcome(oneStep, value), expected, `${name}(${show(value)})`);
        }
        // The table reaches both sides of each type.
        assert.ok(accepted > 0 && accepted < values.length, `${name} accepts ${accepted} of ${values.length}`);
      });
    }
  });

  t.test('as fields of an object: present, absent, optional, and in a list', async (t) => {
    for (const [name, [oneStep, twin]] of Object.entries(pairs)) {
      t.test(name, async () => {
        for (const [shapeName, shape, input, absent] of SHAPES) {
          const mine = shape(oneStep);
          const reference = shape(twin);
          for (const value of values) assertSame(outcome(mine, input(value)), outcome(reference, input(value)), `${name} ${shapeName} (${show(value)})`);
          assertSame(outcome(mine, absent), outcome(reference, absent), `${name} ${shapeName}, absent`);
        }
      });
    }
  });
}

/**
 * Holds `oneStepObject(shape)` to `z.object(shape)`: on `row` as it is, without each field, with
 * each field set to every value, and with a key outside the shape.
 */
export function holdObjectToZod(t: Test, name: string, mine: z.ZodType, shape: z.core.$ZodLooseShape, row: Record<string, unknown>, values: readonly unknown[]): void {
  t.test(`${name}: read in one step as z.object reads it`, async () => {
    const reference = z.object(shape);
    const variants: Array<[string, unknown]> = [['as it is', row], ['with a key outside the shape', { ...row, extra: 'x' }], ['not an object', [row]]];
    for (const key of Object.keys(shape)) {
      const { [key]: _left, ...without } = row;
      variants.push([`without ${key}`, without]);
      for (const value of values) variants.push([`${key} = ${show(value)}`, { ...row, [key]: value }]);
    }
    // The documented row takes the one-step path (not the fallback), or this test holds nothing.
    const read = readerOf(mine);
    assert.ok(read !== undefined && read(row) !== UNREAD, `${name}: the documented row is read in one step`);
    let accepted = 0;
    for (const [label, variant] of variants) {
      const expected = outcome(reference, variant);
      if (expected.success) accepted += 1;
      assertSame(outcome(mine, variant), expected, `${name} ${label}`);
    }
    assert.ok(accepted > Object.keys(shape).length, `${name}: ${accepted} variants accepted`);
  });
}
