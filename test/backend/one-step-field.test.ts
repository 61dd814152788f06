/**
 * The one-step readers the mappings build their answer types from (src/backend/one-step-field.ts):
 * a reader's value when it reads, the zod type's result (and issues) when it leaves the value.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { z } from 'zod';
import { oneStep, oneStepObject, readerOf, requiredReader, UNREAD, withReader } from '../../src/backend/one-step-field.js';

const Digits = z.union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)]);
let read = 0;
const FastDigits = oneStep(Digits, (value) => {
  read += 1;
  return typeof value === 'number' && Number.isInteger(value) ? value : UNREAD;
});

t.test('a one-step type: the reader when it reads, the plain type otherwise, issues and all', async () => {
  read = 0;
  assert.equal(FastDigits.parse(7), 7);
  assert.equal(FastDigits.parse('42'), 42);
  assert.equal(read, 2);
  const refused = FastDigits.safeParse('x');
  assert.equal(refused.success, false);
  assert.deepEqual(refused.error?.issues.map(({ code, path }) => ({ code, path })), Digits.safeParse('x').error?.issues.map(({ code, path }) => ({ code, path })));
  // No issue quotes the value (an answer may hold a password).
  assert.doesNotMatch(JSON.stringify(FastDigits.safeParse('hunter2').error?.issues), /hunter2/);
});

t.test('an object of one-step fields is read at once, and falls back to z.object whole', async () => {
  const Name = withReader(z.string().optional(), (value) => (typeof value === 'string' || value === undefined ? value : UNREAD));
  const shape = { id: FastDigits, name: Name };
  const Row = oneStepObject(shape);
  const reference = z.object(shape);
  assert.ok(readerOf(Row));
  for (const value of [{ id: 1, name: 'a' }, { id: 1 }, { id: 1, name: 'a', extra: true }, { id: '2', name: 'b' }, { id: 'x' }, { name: 'a' }, [], null, 'row']) {
    assert.deepStrictEqual(Row.safeParse(value), reference.safeParse(value), JSON.stringify(value));
  }
  // Read in one step: no key outside the shape, no key for an absent optional field.
  assert.deepStrictEqual(readerOf(Row)?.({ id: 1, extra: true }), { id: 1 });
  assert.equal(readerOf(Row)?.({ id: 'x' }), UNREAD);
  assert.throws(() => oneStepObject({ id: FastDigits, plain: z.string() }), /field plain has no reader/);
  assert.equal(requiredReader(Row), readerOf(Row));
  assert.throws(() => requiredReader(z.string()), /without a reader/);
});
