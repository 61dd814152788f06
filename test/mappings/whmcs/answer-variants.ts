/**
 * Every way one field of a recorded answer can differ: absent, null, or a number sent as a string
 * (and the reverse). Paths are object keys at any depth; array elements are walked into, never removed.
 */
export type Path = ReadonlyArray<string | number>;
export type VariantKind = 'missing' | 'null' | 'retyped';

export interface Variant {
  kind: VariantKind;
  path: Path;
  answer: unknown;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every object-key path in `value`, depth first. */
export function fieldPaths(value: unknown, prefix: Path = []): Path[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => fieldPaths(item, [...prefix, index]));
  if (!isRecord(value)) return [];
  return Object.entries(value).flatMap(([key, child]) => [[...prefix, key], ...fieldPaths(child, [...prefix, key])]);
}

/** A deep copy with `change` applied to the parent of `path` (the last segment is the key). */
export function changedAt(answer: unknown, path: Path, change: (parent: Record<string, unknown>, key: string) => void): unknown {
  const copy: unknown = structuredClone(answer);
  let parent: unknown = copy;
  for (const segment of path.slice(0, -1)) parent = (parent as Record<string | number, unknown>)[segment];
  if (!isRecord(parent)) throw new Error(`no object at ${path.join('.')}`);
  change(parent, String(path.at(-1)));
  return copy;
}

export function valueAt(answer: unknown, path: Path): unknown {
  return path.reduce<unknown>((value, segment) => (value as Record<string | number, unknown>)[segment], answer);
}

/** "15.95" ↔ 15.95, "1" ↔ 1: how legacy and Eloquent code differ. Other values have no twin. */
function retyped(value: unknown): unknown {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string' && /^-?\d{1,15}(\.\d{1,8})?$/.test(value)) return Number(value);
  return undefined;
}

export function* variantsOf(answer: unknown): Generator<Variant> {
  for (const path of fieldPaths(answer)) {
    yield { kind: 'missing', path, answer: changedAt(answer, path, (parent, key) => delete parent[key]) };
    const value = valueAt(answer, path);
    if (value !== null) yield { kind: 'null', path, answer: changedAt(answer, path, (parent, key) => (parent[key] = null)) };
    const twin = retyped(value);
    if (twin !== undefined) yield { kind: 'retyped', path, answer: changedAt(answer, path, (parent, key) => (parent[key] = twin)) };
  }
}

/** "a.*.b" matches ["a", 0, "b"]: `*` stands for any one segment. */
export function matches(pattern: string, path: Path): boolean {
  const parts = pattern.split('.');
  return parts.length === path.length && parts.every((part, index) => part === '*' || part === String(path[index]));
}

/** The path as an operator reads it, array positions left out: `invoices.invoice.tax2`. */
export const fieldName = (path: Path): string => path.filter((segment) => typeof segment === 'string').join('.');
