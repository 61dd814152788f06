/**
 * Exact arithmetic on the mappings' decimal strings: money never goes through a binary float.
 * WHMCS's two tax levels are summed (addDecimals); FOSSBilling's amounts, PHP floats with their
 * noise ("59.699999999999996"), are rounded to the currency's decimals and multiplied.
 *
 * Sums whose scaled digits fit in 2^53 are added as integers, read by character codes; anything
 * longer or of another form goes through BigInt, as every sum did before (same result, about 12
 * fewer strings and arrays a sum).
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
  const scale = Math.max(fractionDigits(left), fractionDigits(right));
  const sum = bigUnits(left, scale) + bigUnits(right, scale);
  return withPoint((sum < 0n ? -sum : sum).toString(), sum < 0n ? '-' : '', scale);
}

/** `left × right`, exactly, with the fraction digits of both together (rare: BigInt throughout). */
export function multiplyDecimals(left: string, right: string): string {
  const leftScale = fractionDigits(left);
  const rightScale = fractionDigits(right);
  const product = bigUnits(left, leftScale) * bigUnits(right, rightScale);
  return withPoint((product < 0n ? -product : product).toString(), product < 0n ? '-' : '', leftScale + rightScale);
}

/**
 * `decimal` with exactly `places` fraction digits, rounded half away from zero on its digits as
 * written: PHP's round() of a float, given the float's shortest text ("8.850000000000001" → "8.85",
 * "0.285" → "0.29"). Text that already has `places` digits is returned as it is.
 */
export function roundDecimal(decimal: string, places: number): string {
  const point = decimal.indexOf('.');
  const fraction = point === -1 ? 0 : decimal.length - point - 1;
  if (fraction === places) return decimal;
  const zero = places === 0 ? '0' : `0.${'0'.repeat(places)}`;
  // Adding zero pads the digits out (and writes -0 as 0).
  if (fraction < places) return addDecimals(decimal, zero);
  const kept = decimal.slice(0, places === 0 ? point : point + 1 + places);
  if (decimal.charCodeAt(point + 1 + places) < 53) return addDecimals(kept, zero);
  const unit = places === 0 ? '1' : `0.${'0'.repeat(places - 1)}1`;
  return addDecimals(kept, decimal.charCodeAt(0) === 45 ? `-${unit}` : unit);
}

/**
 * A finite number's shortest round-trip text (JSON's, and PHP's json_encode's) as a plain decimal:
 * JavaScript writes below 1e-6 and from 1e21 with an exponent ("1.4210854715202004e-14", a float
 * difference that is zero to the cent).
 */
export function decimalOfNumber(value: number): string {
  const text = String(value);
  const exponentAt = text.indexOf('e');
  if (exponentAt === -1) return text;
  const sign = value < 0 ? '-' : '';
  // The mantissa is one digit, then maybe a point and more: the point goes `exponent` places on.
  const digits = text.slice(sign.length, exponentAt).replace('.', '');
  const pointAt = 1 + Number(text.slice(exponentAt + 1));
  if (pointAt <= 0) return `${sign}0.${'0'.repeat(-pointAt)}${digits}`;
  if (pointAt >= digits.length) return `${sign}${digits}${'0'.repeat(pointAt - digits.length)}`;
  return `${sign}${digits.slice(0, pointAt)}.${digits.slice(pointAt)}`;
}

/** Digits after the point as the BigInt paths count them. */
function fractionDigits(decimal: string): number {
  return decimal.split('.')[1]?.length ?? 0;
}

/** `decimal` × 10^scale through BigInt (which refuses, with a SyntaxError, what is not digits). */
function bigUnits(decimal: string, scale: number): bigint {
  const [whole = '0', fraction = ''] = decimal.split('.');
  const negative = whole.startsWith('-');
  const magnitude = BigInt(whole.replace('-', '') + fraction.padEnd(scale, '0'));
  return negative ? -magnitude : magnitude;
}

/** An integer's digits with the point put back `scale` digits from the right. */
function withPoint(magnitude: string, sign: string, scale: number): string {
  const digits = magnitude.padStart(scale + 1, '0');
  return scale === 0 ? `${sign}${digits}` : `${sign}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}
