/**
 * `table[key]` for a table written as a plain object and a key from outside (a file, an upstream
 * answer, config): its own entries only, never one of Object.prototype's (`constructor`,
 * `__proto__`, `toString` …).
 */
export function ownEntry<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
