/**
 * A mapping's field types with a fast path, for the upstream answers' many small unions ("a number
 * or a numeric string"). zod's own parser allocates a payload and an issue for every branch it tries
 * and a payload per pipe and per field: about 1 KB and 0.3-0.7 µs a field, hundreds of fields an
 * answer. A reader takes the usual forms in one step; anything else (every refusal among it) goes to
 * the zod type it reads for, whose acceptance, output and issues are the reference (each mapping's
 * tests hold the two alike).
 */
import { z } from 'zod';

/** What a reader returns for a form it leaves to the zod type. */
export const UNREAD = Symbol('unread');

type Reader<T extends z.ZodType> = (value: unknown) => z.output<T> | typeof UNREAD;

/** The readers of zod types, for the objects made of them (oneStepObject). */
const readers = new WeakMap<z.ZodType, Reader<z.ZodType>>();

/** `read` for the usual forms, `plainType` (and its issues) for the rest. */
export function oneStep<T extends z.ZodType>(plainType: T, read: Reader<T>) {
  const type = z.transform((value: unknown, ctx): z.output<T> => {
    const fast = read(value);
    if (fast !== UNREAD) return fast;
    const result = plainType.safeParse(value);
    if (result.success) return result.data;
    // Values are never quoted in issues: an answer may hold a password.
    for (const issue of result.error.issues) ctx.issues.push({ ...issue, input: undefined });
    return z.NEVER;
  });
  readers.set(type, read);
  return type;
}

/** The reader of a zod type, if it has one. */
export function readerOf<T extends z.ZodType>(type: T): Reader<T> | undefined {
  return readers.get(type) as Reader<T> | undefined;
}

/** The reader of a type that must have one: made by oneStep or given one by withReader. */
export function requiredReader<T extends z.ZodType>(type: T): Reader<T> {
  const read = readerOf(type);
  if (read === undefined) throw new Error('a type without a reader (oneStep or withReader)');
  return read;
}

/** Gives `type` a reader for its usual forms, for the objects made of it; `type` is unchanged. */
export function withReader<T extends z.ZodType>(type: T, read: Reader<T>): T {
  readers.set(type, read);
  return type;
}

/**
 * `z.object(shape)` of fields that all have readers, read in one step when every reader reads its
 * value: the output built at once, without a payload per field. Anything else (a field a reader
 * leaves, not an object) is z.object's, issues and all. Keys outside the shape are dropped, as
 * z.object drops them; a field read as undefined from an absent key is left out, as z.object does.
 */
export function oneStepObject<S extends z.core.$ZodLooseShape>(shape: S) {
  const object = z.object(shape);
  const known = Object.entries(shape).map(([key, type]) => {
    const readField = readers.get(type as z.ZodType);
    if (readField === undefined) throw new Error(`field ${key} has no reader (oneStep or withReader)`);
    return [key, readField] as const;
  });
  const read = (value: unknown): z.output<typeof object> | typeof UNREAD => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return UNREAD;
    const input = value as Record<string, unknown>;
    const output: Record<string, unknown> = {};
    for (const [key, readField] of known) {
      const field = readField(input[key]);
      if (field === UNREAD) return UNREAD;
      if (field !== undefined || key in input) output[key] = field;
    }
    return output as z.output<typeof object>;
  };
  return oneStep(object, read);
}
