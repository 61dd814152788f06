/**
 * The field types the WHMCS answer schemas are built from (see parse.ts for the tolerance rules):
 * numbers as strings, WHMCS's many forms of "none" and of an empty collection, HTML-encoded text,
 * local times, and the check that a list answer did not drop rows.
 */
import { z } from 'zod';
import { oneStep, readerOf, UNREAD, withReader } from '../../src/backend/one-step-field.js';
import { ownEntry } from '../../src/own-entry.js';
import { decodeEntities } from './text.js';
import { type LocalDateTime, parseLocalDateTime } from './time.js';

// ---- primitives -----------------------------------------------------------------------------
//
// Each field type is written twice: as plain zod (`plain` below: what it accepts, what it gives, and
// its issues when it refuses), and as one step (src/backend/one-step-field.ts) that reads the common
// forms itself and hands anything else to the plain type. A list answer holds hundreds of fields, and plain zod's
// unions, pipes and transforms allocate about 1 KB and take 0.1-0.6 µs for each; one step is 4-11
// times cheaper (`npm run bench:parsing`: a page of 25 invoices went from 372 KB and 174 µs to
// 109 KB and 38 µs). A test holds every fast path to its plain type over a table of values
// (test/mappings/whmcs/parse-fields.test.ts).

/** Legacy WHMCS code returns numbers as strings, Eloquent code as numbers: accept both. */
const PlainInt = z
  .union([z.number(), z.string().regex(/^\s*-?\d{1,16}\s*$/).transform(Number)])
  .pipe(z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER));

/** Two decimals at least, no trailing zeros beyond (so "0.000", 0 and "0.00" read alike). */
function padDecimals(decimal: string): string {
  // Already so (the usual form): exactly two decimals.
  if (decimal.length > 3 && decimal.indexOf('.') === decimal.length - 3) return decimal;
  const [whole, fraction = ''] = decimal.split('.');
  return `${whole}.${fraction.replace(/0+$/, '').padEnd(2, '0')}`;
}

const DECIMAL = /^-?\d{1,15}(\.\d{1,8})?$/;

/** LocalDateTime, or null for WHMCS's "none"; undefined when the text is not a date. */
function readLocalTime(value: string): LocalDateTime | null | undefined {
  if (value === '' || value.startsWith('0000-00-00')) return null;
  return parseLocalDateTime(value.trim()) ?? undefined;
}

/** Free text: decoded once, since WHMCS stores every input HTML-encoded. */
const PlainText = z.union([z.string(), z.number()]).transform((value) => decodeEntities(String(value)));

/** The field types as plain zod: the reference for each one-step reader below. */
export const plain = {
  Count: PlainInt.pipe(z.number().min(0)),
  /** A record id: positive; v1 ids are strings. */
  Id: PlainInt.pipe(z.number().min(1)).transform(String),
  /** A reference that WHMCS writes as 0, "0", "" or null when there is none; the field must be there. */
  OptionalId: z
    .union([z.null(), z.literal(''), PlainInt.pipe(z.number().min(0))])
    .transform((value) => (typeof value === 'number' && value > 0 ? String(value) : null)),
  /** Money is a decimal string ("9.99", "-1.00"), sometimes a JSON number; never a float on our side. */
  Decimal: z
    .union([z.number().transform(String), z.string().trim()])
    .pipe(z.string().regex(DECIMAL, 'not a decimal amount'))
    .transform(padDecimals),
  Text: PlainText,
  /** Text whose "none" is "" (null counts as none); the field itself must be there. */
  TextOrNone: z.union([PlainText, z.null()]).transform((value) => value ?? ''),
  /** Kept byte for byte (credentials, addresses): decoding could corrupt a secret. null is "". */
  RawText: z.union([z.string(), z.number(), z.null()]).transform((value) => (value === null ? '' : String(value))),
  /** A string only, as it is (a kind, a type name). */
  AnyString: z.string(),
  /** "YYYY-MM-DD" or "YYYY-MM-DD HH:MM:SS"; "0000-00-00…", "" and null mean none; the field must be there. */
  LocalTime: z.union([z.string(), z.null()]).transform((value, ctx): LocalDateTime | null => {
    if (value === null) return null;
    const parsed = readLocalTime(value);
    if (parsed === undefined) ctx.issues.push({ code: 'custom', message: 'not a date', input: value });
    return parsed ?? null;
  }),
  /** PHP truthiness as WHMCS writes flags: 1/0, "1"/"0", "on"/"", true/false; null is false. */
  Flag: z
    .union([z.boolean(), z.number(), z.string(), z.null()])
    .transform((value) => value === true || value === 1 || value === '1' || value === 'on' || value === 'true'),
};

/** A whole number within the safe range, as a number or as digits (the plain type also trims). */
function readInt(value: unknown): number | typeof UNREAD {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : UNREAD;
  // Up to 15 digits is always within the safe range.
  return typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : UNREAD;
}

function readText(value: unknown): string | typeof UNREAD {
  if (typeof value === 'string') return decodeEntities(value);
  return typeof value === 'number' && Number.isFinite(value) ? decodeEntities(String(value)) : UNREAD;
}

export const Count = oneStep(plain.Count, (value) => {
  const int = readInt(value);
  return int !== UNREAD && int >= 0 ? int : UNREAD;
});

export const Id = oneStep(plain.Id, (value) => {
  const int = readInt(value);
  return int !== UNREAD && int >= 1 ? String(int) : UNREAD;
});

export const OptionalId = oneStep(plain.OptionalId, (value) => {
  if (value === null || value === '') return null;
  const int = readInt(value);
  if (int === UNREAD || int < 0) return UNREAD;
  return int > 0 ? String(int) : null;
});

/** A decimal in its usual forms (Decimal's reader). */
export function readDecimal(value: unknown): string | typeof UNREAD {
  const text = typeof value === 'string' ? value : typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
  return text !== undefined && DECIMAL.test(text) ? padDecimals(text) : UNREAD;
}

export const Decimal = oneStep(plain.Decimal, readDecimal);

export const Text = oneStep(plain.Text, readText);

function readTextOrNone(value: unknown): string | typeof UNREAD {
  return value === null ? '' : readText(value);
}

export const TextOrNone = oneStep(plain.TextOrNone, readTextOrNone);

export const RawText = oneStep(plain.RawText, (value) => {
  if (typeof value === 'string') return value;
  if (value === null) return '';
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : UNREAD;
});

export const AnyString = oneStep(plain.AnyString, (value) => (typeof value === 'string' ? value : UNREAD));

export const LocalTime = oneStep(plain.LocalTime, (value) => {
  if (value === null) return null;
  const parsed = typeof value === 'string' ? readLocalTime(value) : undefined;
  return parsed === undefined ? UNREAD : parsed;
});

export const Flag = oneStep(plain.Flag, (value) => {
  const readable = typeof value === 'boolean' || typeof value === 'string' || value === null || (typeof value === 'number' && Number.isFinite(value));
  return readable ? value === true || value === 1 || value === '1' || value === 'on' || value === 'true' : UNREAD;
});

/** A field only some requests read: absent (or null) stays `undefined`, and those requests refuse it. */
export const Lazy = <T extends z.ZodType>(schema: T) => {
  const type = schema
    .optional()
    .transform((value: z.output<T> | undefined) => (value === null ? undefined : value) as Exclude<z.output<T>, null> | undefined);
  const read = readerOf(schema);
  if (!read) return type;
  return withReader(type, (value) => {
    if (value === undefined) return undefined;
    const inner = read(value);
    return inner === null ? undefined : (inner as z.output<typeof type> | typeof UNREAD);
  });
};

/** Text whose "none" is "" whether null or absent. */
export const TextOrEmpty = withReader(
  TextOrNone.optional().transform((value) => value ?? ''),
  (value) => (value === undefined ? '' : readTextOrNone(value)),
);

/**
 * A WHMCS collection `{ <item>: [...] }`. When empty, WHMCS sends "" (GetClientsProducts), [] (GetInvoices),
 * null, or omits the key (GetProducts, GetOrders, GetInvoice items): so an absent key reads as
 * empty, and the answers where that could hide rows check it against a count (`paged`).
 */
export function collection<K extends string, T extends z.ZodType>(key: K, item: T) {
  const present = presentCollection(key, item);
  const type = present.optional().transform((value) => value ?? []);
  const read = readerOf(present);
  return read ? withReader(type, (value) => (value === undefined ? [] : read(value))) : type;
}

/** A collection whose key WHMCS always sends; its empty forms are still "", [] and null. */
export function presentCollection<K extends string, T extends z.ZodType>(key: K, item: T) {
  const wrapper = z.object({ [key]: z.array(item) } as { [P in K]: z.ZodArray<T> });
  const type = z
    .union([wrapper, z.literal(''), z.null(), z.array(z.never()).max(0)])
    .transform((value): Array<z.output<T>> => {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
      return (value as Record<K, Array<z.output<T>>>)[key];
    });
  const readItem = readerOf(item);
  if (!readItem) return type;
  return withReader(type, (value) => {
    if (value === '' || value === null) return [];
    if (Array.isArray(value)) return value.length === 0 ? [] : UNREAD;
    const rows = typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    if (!Array.isArray(rows)) return UNREAD;
    const output: Array<z.output<T>> = new Array(rows.length);
    for (let index = 0; index < rows.length; index += 1) {
      const row = readItem(rows[index]);
      if (row === UNREAD) return UNREAD;
      output[index] = row;
    }
    return output;
  });
}

/** Upstream enum → v1 enum through a table, compared case- and punctuation-insensitively. */
export function mapped<T>(table: Readonly<Record<string, T>>, fallback?: T) {
  // Own entries only: a status "Constructor" must not find Object.prototype's.
  const lookup = (value: string): T | undefined => ownEntry(table, value.toLowerCase().replace(/[^a-z0-9]/g, '')) ?? fallback;
  const type = z.string().transform((value, ctx): T => {
    const found = lookup(value);
    if (found !== undefined) return found;
    ctx.issues.push({ code: 'custom', message: 'unknown value', input: value });
    return z.NEVER;
  });
  return withReader(type, (value) => (typeof value === 'string' ? ((lookup(value) as z.output<typeof type> | undefined) ?? UNREAD) : UNREAD));
}

/**
 * Where and why an answer did not fit, for the operator. A union's first branch is the real shape
 * (the others are WHMCS's ways of saying "empty"), so its issues are the ones that explain. Values
 * are never quoted: an answer may hold a password.
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], limit = 5): string {
  const flat = (list: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[]): string[] =>
    list.flatMap((issue) => {
      const path = [...prefix, ...issue.path];
      const firstBranch = issue.code === 'invalid_union' ? issue.errors[0] : undefined;
      if (firstBranch && firstBranch.length > 0) return flat(firstBranch, path);
      return [`${path.map(String).join('.') || '(root)'}: ${issue.message}`];
    });
  return flat(issues, []).slice(0, limit).join('; ');
}

// ---- list answers ---------------------------------------------------------------------------

/** The offset WHMCS echoes; only used to tell an empty page from a cut-off answer (absent: 0). */
export const StartNumber = z.union([Count, z.null()]).optional().catch(undefined);

/**
 * An empty collection is believed only when `totalresults` says no row is due from this offset:
 * otherwise the rows were dropped, and an empty list (or "no such order") would be wrong data.
 */
export function rowsDue<A extends { totalresults?: number | undefined; startnumber?: number | null | undefined }>(key: keyof A & string) {
  return (answer: A, ctx: z.core.$RefinementCtx<A>) => {
    const rows = answer[key] as unknown[];
    const total = answer.totalresults;
    if (rows.length === 0 && total !== undefined && total > (answer.startnumber ?? 0)) {
      ctx.addIssue({ code: 'custom', path: [key], message: `absent or empty although totalresults is ${total}` });
    }
  };
}
