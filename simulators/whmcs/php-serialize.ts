/**
 * A minimal PHP `unserialize()` for the simulator's own use, modelled on WHMCS `safe_unserialize`:
 * only N, b, i, d, s and a are accepted (never objects or references), `s:N:` counts UTF-8 bytes,
 * and anything else yields `undefined` so the caller can silently fall back to defaults, as WHMCS does.
 */

export type PhpValue = null | boolean | number | string | PhpArray;
/** PHP arrays are ordered maps; keys are kept as strings ("5" and 5 are the same key in PHP). */
export type PhpArray = Map<string, PhpValue>;

/** Deep enough for any real order payload, shallow enough that hostile input cannot blow the stack. */
const MAX_DEPTH = 32;

class Malformed extends Error {}

class Reader {
  private position = 0;

  constructor(private readonly bytes: Buffer) {}

  expect(text: string): void {
    const slice = this.bytes.subarray(this.position, this.position + text.length).toString('latin1');
    if (slice !== text) throw new Malformed();
    this.position += text.length;
  }

  /** Reads up to (and consumes) the terminator; returns the text before it. */
  until(terminator: string): string {
    const end = this.bytes.indexOf(terminator, this.position, 'latin1');
    if (end < 0) throw new Malformed();
    const text = this.bytes.subarray(this.position, end).toString('latin1');
    this.position = end + terminator.length;
    return text;
  }

  take(byteCount: number): string {
    if (this.position + byteCount > this.bytes.length) throw new Malformed();
    const text = this.bytes.subarray(this.position, this.position + byteCount).toString('utf8');
    this.position += byteCount;
    return text;
  }

  next(): string {
    const char = this.bytes.subarray(this.position, this.position + 1).toString('latin1');
    if (char === '') throw new Malformed();
    this.position += 1;
    return char;
  }
}

function parseInteger(text: string): number {
  if (!/^[+-]?\d+$/.test(text)) throw new Malformed();
  return Number(text);
}

function parseDouble(text: string): number {
  if (text === 'INF') return Infinity;
  if (text === '-INF') return -Infinity;
  if (text === 'NAN') return NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new Malformed();
  return Number(text);
}

function readString(reader: Reader): string {
  const length = parseInteger(reader.until(':'));
  if (length < 0) throw new Malformed();
  reader.expect('"');
  const text = reader.take(length);
  reader.expect('";');
  return text;
}

function readArray(reader: Reader, depth: number): PhpArray {
  const count = parseInteger(reader.until(':'));
  if (count < 0) throw new Malformed();
  reader.expect('{');
  const entries: PhpArray = new Map();
  for (let index = 0; index < count; index += 1) {
    const key = readValue(reader, depth + 1);
    if (typeof key !== 'number' && typeof key !== 'string') throw new Malformed();
    entries.set(String(key), readValue(reader, depth + 1));
  }
  reader.expect('}');
  return entries;
}

function readValue(reader: Reader, depth: number): PhpValue {
  if (depth > MAX_DEPTH) throw new Malformed();
  const type = reader.next();
  if (type === 'N') {
    reader.expect(';');
    return null;
  }
  reader.expect(':');
  switch (type) {
    case 'b': {
      const flag = reader.until(';');
      if (flag !== '0' && flag !== '1') throw new Malformed();
      return flag === '1';
    }
    case 'i':
      return parseInteger(reader.until(';'));
    case 'd':
      return parseDouble(reader.until(';'));
    case 's':
      return readString(reader);
    case 'a':
      return readArray(reader, depth);
    default:
      throw new Malformed(); // O, C, r, R, E…: refused, as safe_unserialize does
  }
}

/** Returns the decoded value, or `undefined` when the input is not an acceptable serialization. */
function phpUnserialize(bytes: Buffer): PhpValue | undefined {
  try {
    // Like PHP, trailing bytes after the first complete value are ignored.
    return readValue(new Reader(bytes), 0);
  } catch (error) {
    if (error instanceof Malformed) return undefined;
    throw error;
  }
}

/** Decodes the base64 of a serialized array (AddOrder `configoptions`/`customfields`); malformed → undefined. */
export function decodeSerializedArray(base64: string): PhpArray | undefined {
  if (!/^[A-Za-z0-9+/=\s_-]*$/.test(base64)) return undefined;
  const value = phpUnserialize(Buffer.from(base64, 'base64'));
  return value instanceof Map ? value : undefined;
}
