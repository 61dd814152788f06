/**
 * Read, change, and write only over what was read (the stores' compare-and-set writes). A refused
 * write means another change landed in between: the change is made again on top of it, never over
 * it. Each refusal is another writer's success, so the loop ends; the bound turns a store that
 * refuses every write (a broken comparison) into an error instead of a request that never ends.
 */
export interface Update<T, R> {
  read: () => Promise<T>;
  /** The value to write, computed from what was read. */
  change: (current: T) => R;
  /** Writes `next` only if the stored value is still `current`; false when it was not. */
  write: (next: R, current: T) => Promise<boolean>;
}

/** Far more refusals in a row than concurrent operators make; only a broken store reaches it. */
export const MAX_UPDATE_ATTEMPTS = 64;

export async function updateIfUnchanged<T, R>(update: Update<T, R>): Promise<{ before: T; after: R }> {
  for (let attempt = 1; attempt <= MAX_UPDATE_ATTEMPTS; attempt++) {
    const before = await update.read();
    const after = update.change(before);
    if (await update.write(after, before)) return { before, after };
  }
  throw new Error(`the store refused ${MAX_UPDATE_ATTEMPTS} conditional writes in a row`);
}
