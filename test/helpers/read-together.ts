/**
 * For races between two changes of one record: the first two calls of a store's read are held until
 * both have read, so that both changes start from the same record.
 */
export function readTogether<Args extends unknown[], T>(read: (...args: Args) => Promise<T>): (...args: Args) => Promise<T> {
  const waiting: Array<() => void> = [];
  let held = 0;
  return async (...args) => {
    const record = await read(...args);
    if (held < 2) {
      held += 1;
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        if (waiting.length === 2) for (const go of waiting.splice(0)) go();
      });
    }
    return record;
  };
}
