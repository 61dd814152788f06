/**
 * Sums of WHMCS decimal strings (two tax levels into v1's one), exact: never through a binary
 * float. Amounts whose scaled digits fit in 2^53 are added as integers, read by character codes;
 * anything longer or of another form goes through BigInt, as every sum did before (same result,
 * about 12 fewer strings and arrays a sum).
 */

/** `left + right`, with as many fraction digits as the longer of the two. */
export function addDecimals(left: string, right: string): string {
  const scale = Math.max(afterPoint(left), afterPoint(right));
  const sum = safeUnits(left, scale) + safeUnits(right, scale);
  if (Number.isSafeInteger(sum)) return withPoint(String(Math.abs(sum)), sum < 0 ? '-' : '', scale);
  return addLongDecimals(left, right);
}

/** Digits after the first point (what `safeUnits` reads; the long path counts its own way). */
function afterPoint(decimal: string): number {
  const point = decimal.indexOf('.');
  return point === -1 ? 0 : decimal.length - point - 1;
}

/**
 * `decimal` (an optional '-', digits with at most one point among them) × 10^scale as an integer;
 * NaN for any other form or past 2^53, where the sum goes through BigInt instead. Every step below
 * 2^53 is exact. ('5.', '.5' and '' read as the BigInt sum reads them: 5, 0.5 and 0.)
 */
function safeUnits(decimal: string, scale: number): number {
  const negative = decimal.charCodeAt(0) === 45;
  let index = negative ? 1 : 0;
  let units = 0;
  let fraction = -1;
  for (; index < decimal.length; index += 1) {
    const code = decimal.charCodeAt(index);
    if (code >= 48 && code <= 57) {
      units = units * 10 + (code - 48);
      if (fraction >= 0) fraction += 1;
    } else if (code === 46 && fraction === -1) {
      fraction = 0;
    } else {
      return Number.NaN;
    }
  }
  units *= 10 ** (scale - Math.max(fraction, 0));
  if (units > Number.MAX_SAFE_INTEGER) return Number.NaN;
  return negative ? -units : units;
}

/** The sum through BigInt, whatever the length (what every sum did before the integer path). */
export function addLongDecimals(left: string, right: string): string {
  const scale = Math.max(left.split('.')[1]?.length ?? 0, right.split('.')[1]?.length ?? 0);
  const units = (decimal: string): bigint => {
    const [whole = '0', fraction = ''] = decimal.split('.');
    const negative = whole.startsWith('-');
    const magnitude = BigInt(whole.replace('-', '') + fraction.padEnd(scale, '0'));
    return negative ? -magnitude : magnitude;
  };
  const sum = units(left) + units(right);
  return withPoint((sum < 0n ? -sum : sum).toString(), sum < 0n ? '-' : '', scale);
}

/** An integer's digits with the point put back `scale` digits from the right. */
function withPoint(magnitude: string, sign: string, scale: number): string {
  const digits = magnitude.padStart(scale + 1, '0');
  return scale === 0 ? `${sign}${digits}` : `${sign}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}
