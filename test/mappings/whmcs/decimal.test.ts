/**
 * The invoice's v1 tax is WHMCS's two tax levels summed (mappings/whmcs/decimal.ts). The sum reads
 * common amounts as integers by character codes; here it is held to the BigInt sum every amount
 * went through before (which still takes the long ones), on edge cases, malformed strings and random
 * amounts on both sides of 2^53, and both to explicit sums.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { addDecimals, addLongDecimals } from '../../../mappings/whmcs/decimal.js';

/** The result, or the error's class and message: both sides must agree on either. */
function outcome(sum: (left: string, right: string) => string, left: string, right: string): string {
  try {
    return sum(left, right);
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

function holdToBigInt(left: string, right: string): void {
  assert.equal(outcome(addDecimals, left, right), outcome(addLongDecimals, left, right), `${JSON.stringify(left)} + ${JSON.stringify(right)}`);
}

const EDGES = [
  '0', '0.00', '-0', '-0.00', '1', '-1', '0.5', '-0.5', '1.10', '0.25', '12.50', '-12.50', '007.50', '-007.5',
  '0.00000001', '99999999.99999999', '999999999999999', '-999999999999999', '999999999999999.99999999',
  '9007199254740991', '9007199254740992', '9007199254740993', '90071992547409.91', '90071992547409.92',
  '4503599627370496.5', '0.9007199254740993', '123456789012345.12345678',
  // Forms the Decimal type refuses before a sum; the sum must still behave as it did.
  '', '-', '.', '.5', '-.5', '5.', '1.2.3', '+5', ' 5', '5 ', '1e3', 'abc', '--5', '1,5', '٣', '9:', '1/2', '-', '5-',
];

t.test('edge cases: the same sum, or the same error, as the BigInt sum', async () => {
  for (const left of EDGES) for (const right of EDGES) holdToBigInt(left, right);
});

t.test('the common case: WHMCS amounts with two decimals', async () => {
  const sums: Array<[string, string, string]> = [
    ['1.10', '0.25', '1.35'],
    ['4.00', '0.00', '4.00'],
    ['-0.00', '0.00', '0.00'],
    ['1.5', '0.25', '1.75'],
    ['0.1', '0.2', '0.3'],
    ['-1.10', '0.25', '-0.85'],
    ['9007199254740991', '1', '9007199254740992'],
    ['999999999999999.99999999', '0.00000001', '1000000000000000.00000000'],
    ['-999999999999999.99999999', '0.5', '-999999999999999.49999999'],
    ['123456789012345.12345678', '-123456789012345.12345678', '0.00000000'],
  ];
  for (const [left, right, sum] of sums) assert.equal(addDecimals(left, right), sum, `${left} + ${right}`);
  assert.equal(addLongDecimals('1.10', '0.25'), '1.35');
  assert.equal(addLongDecimals('-0.00', '0'), '0.00');
  assert.throws(() => addLongDecimals('abc', '1'), SyntaxError);
});

t.test('amounts below 2^53 are summed without BigInt', async () => {
  /** The sums' outcomes while BigInt throws (put back before anything else runs). */
  const withoutBigInt = (pairs: ReadonlyArray<readonly [string, string]>): string[] => {
    const original = globalThis.BigInt;
    globalThis.BigInt = (() => {
      throw new Error('BigInt called');
    }) as unknown as BigIntConstructor;
    try {
      return pairs.map(([left, right]) => outcome(addDecimals, left, right));
    } finally {
      globalThis.BigInt = original;
    }
  };
  assert.deepEqual(
    withoutBigInt([['1.10', '0.25'], ['12', '0.5'], ['-3.5', '1.25'], ['900719925474099.1', '0'], ['5.', '.5'], ['9007199254740992', '0']]),
    ['1.35', '12.5', '-2.25', '900719925474099.1', '5.5', 'Error: BigInt called'],
  );
});

t.test('random amounts of every length and scale, either sign, on both sides of 2^53', async () => {
  let seed = 12345;
  const next = (bound: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % bound;
  };
  const digits = (count: number): string => Array.from({ length: count }, () => String(next(10))).join('');
  const amount = (): string => {
    const fraction = next(10);
    return `${next(4) === 0 ? '-' : ''}${digits(1 + next(17))}${fraction === 0 ? '' : `.${digits(fraction)}`}`;
  };
  for (let index = 0; index < 20_000; index += 1) holdToBigInt(amount(), amount());
});
