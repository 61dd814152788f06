/**
 * Node keeps the first line of a header it takes as single (Host, Content-Type, Authorization) and
 * drops the rest: a proxy in front may have read another. Where that matters, the request is
 * refused instead.
 */

/** Whether the header `name` (lower case) comes in more than one line. */
export function repeatsHeader(rawHeaders: readonly string[], name: string): boolean {
  let seen = 0;
  // Names only (even indexes); the length test spares most of them the lowercasing.
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const line = rawHeaders[i] as string;
    if (line.length === name.length && line.toLowerCase() === name && ++seen > 1) return true;
  }
  return false;
}
