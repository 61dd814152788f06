/**
 * A mapping's field type with a fast path, for the upstream answers' many small unions ("a number
 * or a numeric string"). zod's own parser allocates a payload and an issue for every branch it tries
 * and a payload per pipe: about 1 KB and 0.3-0.7 µs a field, hundreds of fields an answer. `read`
 * takes the usual forms in one step; anything else (every refusal among it) goes to the plain type,
 * whose acceptance, output and issues are the reference (each mapping's tests hold the two alike).
 */
import { z } from 'zod';

/** What `read` returns for a form it leaves to the plain type. */
export const UNREAD = Symbol('unread');

export function oneStep<T extends z.ZodType>(plainType: T, read: (value: unknown) => z.output<T> | typeof UNREAD) {
  return z.transform((value: unknown, ctx): z.output<T> => {
    const fast = read(value);
    if (fast !== UNREAD) return fast;
    const result = plainType.safeParse(value);
    if (result.success) return result.data;
    // Values are never quoted in issues: an answer may hold a password.
    for (const issue of result.error.issues) ctx.issues.push({ ...issue, input: undefined });
    return z.NEVER;
  });
}
