/**
 * The mappings' exact decimals (src/backend/decimal.ts). WHMCS's invoice tax is its two tax levels
 * summed: the sum reads common amounts as integers by character codes; here it is held to the
 * BigInt sum every amount went through before (which still takes the long ones), on edge cases,
 * malformed strings and random amounts on both sides of 2^53, and both to explicit sums.
 * FOSSBilling's PHP floats are written out without an exponent, rounded to the currency's decimals
 * half away from zero, and multiplied, all without a binary float.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { addDecimals, addLongDecimals, decimalOfNumber, multiplyDecimals, roundDecimal } from '../../src/backend/decimal.js';

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

t.test('rounding to a currency\'s decimals: half away from zero on the digits as written', async () => {
  const cases: Array<[string, number, string]> = [
    // PHP float noise (json_encode's shortest text of price × quantity, of summed lines).
    ['59.699999999999996', 2, '59.70'],
    ['8.850000000000001', 2, '8.85'],
    ['0.30000000000000004', 2, '0.30'],
    ['0.285', 2, '0.29'],
    ['1.005', 2, '1.01'],
    ['-2.345', 2, '-2.35'],
    ['-2.344', 2, '-2.34'],
    ['99.995', 2, '100.00'],
    ['-99.995', 2, '-100.00'],
    ['0.0000001', 2, '0.00'],
    ['-0.004', 2, '0.00'],
    // Fewer digits are padded; exactly as many are kept as they are.
    ['19.90', 2, '19.90'],
    ['-0.00', 2, '-0.00'],
    ['5', 2, '5.00'],
    ['12.5', 2, '12.50'],
    ['-0', 2, '0.00'],
    ['15.000', 2, '15.00'],
    ['2.5', 0, '3'],
    ['-2.5', 0, '-3'],
    ['2.49', 0, '2'],
    ['7', 0, '7'],
    ['1.23456', 4, '1.2346'],
    ['123456789012345678.995', 2, '123456789012345679.00'],
  ];
  for (const [decimal, places, rounded] of cases) assert.equal(roundDecimal(decimal, places), rounded, `${decimal} to ${places}`);
});

t.test('rounding agrees with rounding the exact value, for every cent and its neighbours', async () => {
  // Each x.xx5 rounds away from zero; each neighbour to its nearest cent.
  for (let mills = -20_000; mills <= 20_000; mills += 1) {
    const text = (mills / 1000).toFixed(3);
    const away = Math.sign(mills) * Math.floor((Math.abs(mills) + 5) / 10);
    const expected = (away / 100).toFixed(2).replace(/^-(0\.00)$/, '$1');
    assert.equal(roundDecimal(text, 2), expected, text);
  }
});

t.test('products are exact, with both fraction digits', async () => {
  const products: Array<[string, string, string]> = [
    ['19.90', '3', '59.70'],
    ['2.95', '3', '8.85'],
    ['4.99', '1', '4.99'],
    ['0.1', '0.2', '0.02'],
    ['-1.50', '2', '-3.00'],
    ['-1.5', '-2', '3.0'],
    ['0', '7', '0'],
    ['99999999999999.99', '1000', '99999999999999990.00'],
  ];
  for (const [left, right, product] of products) assert.equal(multiplyDecimals(left, right), product, `${left} × ${right}`);
  // The float product these stand for carries noise.
  assert.equal(String(19.9 * 3), '59.699999999999996');
});

t.test('numbers become their shortest text, without an exponent', async () => {
  const cases: Array<[number, string]> = [
    [0, '0'],
    [-0, '0'],
    [12.5, '12.5'],
    [-3.1, '-3.1'],
    [19.9 * 3, '59.699999999999996'],
    [1e-7, '0.0000001'],
    [-1.5e-7, '-0.00000015'],
    [1.4210854715202004e-14, '0.000000000000014210854715202004'],
    [1e21, '1000000000000000000000'],
    [-1.25e22, '-12500000000000000000000'],
    [123456789012345680000, '123456789012345680000'],
  ];
  for (const [value, text] of cases) assert.equal(decimalOfNumber(value), text, String(value));
  // The text is the number's own: it reads back as the same number.
  let seed = 7;
  for (let index = 0; index < 20_000; index += 1) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const value = (seed / 2147483648 - 0.5) * 10 ** ((seed % 60) - 30);
    const text = decimalOfNumber(value);
    assert.match(text, /^-?\d+(\.\d+)?$/, String(value));
    assert.equal(Number(text), value, String(value));
  }
});
