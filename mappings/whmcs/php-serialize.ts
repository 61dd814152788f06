/**
 * AddOrder takes `configoptions[n]` and `customfields[n]` as base64 of a PHP `serialize()`d array
 * `{int => int|string}`. WHMCS silently ignores anything it cannot unserialize, so this must be exact:
 * string lengths are UTF-8 byte counts.
 */

export type PhpArrayValue = number | string;

function serializeInt(value: number): string {
  if (!Number.isSafeInteger(value)) throw new RangeError(`not a safe integer: ${value}`);
  return `i:${value};`;
}

function serializeValue(value: PhpArrayValue): string {
  if (typeof value === 'number') return serializeInt(value);
  return `s:${Buffer.byteLength(value, 'utf8')}:"${value}";`;
}

/** `serialize()` of an integer-keyed array, keys in the order given. */
export function phpSerializeArray(entries: ReadonlyArray<readonly [number, PhpArrayValue]>): string {
  const body = entries.map(([key, value]) => serializeInt(key) + serializeValue(value)).join('');
  return `a:${entries.length}:{${body}}`;
}

/** What AddOrder expects in `configoptions[n]` / `customfields[n]`. */
export function encodePhpArray(entries: ReadonlyArray<readonly [number, PhpArrayValue]>): string {
  return Buffer.from(phpSerializeArray(entries), 'utf8').toString('base64');
}
