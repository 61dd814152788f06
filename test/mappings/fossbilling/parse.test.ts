/**
 * FOSSBilling's number-or-text unions and optional texts read their usual forms in one step and leave the rest to the
 * same type in plain zod (mappings/fossbilling/parse.ts): held to it over a table of values.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { Amount, DateTime, Flag, Id, OptionalText, plain } from '../../../mappings/fossbilling/parse.js';
import { FIELD_VALUES, holdToPlainTwins } from '../../helpers/one-step-fields.js';

holdToPlainTwins(
  t,
  { Id: [Id, plain.Id], Amount: [Amount, plain.Amount], OptionalText: [OptionalText, plain.OptionalText], DateTime: [DateTime, plain.DateTime], Flag: [Flag, plain.Flag] },
  FIELD_VALUES,
);

t.test('what they give', async () => {
  assert.equal(Id.parse(42), '42');
  assert.equal(Id.parse('007'), '7');
  assert.equal(Amount.parse(12.5), '12.5');
  // A float keeps its noise here (map.ts rounds money), but never an exponent.
  assert.equal(Amount.parse(59.699999999999996), '59.699999999999996');
  assert.equal(Amount.parse(5.551115123125783e-17), '0.00000000000000005551115123125783');
  assert.equal(Amount.parse(1e21), '1000000000000000000000');
  assert.equal(Amount.parse('-3.10'), '-3.10');
  assert.deepEqual([true, 1, '1', false, 0, '0', '', 'yes'].map((value) => Flag.parse(value)), [true, true, true, false, false, false, false, false]);
  assert.equal(Id.safeParse(-1).success, false);
  assert.equal(Amount.safeParse('1e3').success, false);
});
