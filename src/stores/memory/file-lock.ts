/**
 * A lock between processes for a file's read-change-write cycle: `<path>.lock`, made exclusively.
 * The key file's writers (the gateway and the CLI) hold it; nothing else is needed on one machine.
 */
import { mkdir, open, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

/** A write cycle takes milliseconds: a lock this old was left by a writer that died. */
const LOCK_STALE_MS = 10_000;
/** How long a writer waits for another's cycle before it gives up, naming the lock. */
const LOCK_WAIT_MS = 5_000;

/**
 * Runs `work` holding `<path>.lock` (created exclusively; removed after). A stale lock (a writer
 * died holding it) is taken over by one writer at a time (removeStaleLock).
 */
export async function withFileLock(path: string, work: () => Promise<void>): Promise<void> {
  const lock = `${path}.lock`;
  await mkdir(dirname(path), { recursive: true });
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let delayMs = 2; ; delayMs = Math.min(delayMs * 2, 50)) {
    try {
      const handle = await open(lock, 'wx', 0o600);
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const held = await stat(lock).catch(() => null);
    // Removed: try again at once. Another writer taking it over: wait, as for a held lock.
    if (held !== null && isStale(held.mtimeMs) && (await removeStaleLock(lock))) continue;
    if (Date.now() > deadline) throw new Error(`key file ${path} stayed locked for ${LOCK_WAIT_MS} ms by another writer (${lock})`);
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  try {
    await work();
  } finally {
    await unlink(lock).catch(() => undefined);
  }
}

function isStale(mtimeMs: number): boolean {
  return Date.now() - mtimeMs > LOCK_STALE_MS;
}

/**
 * Removes the lock if it is still stale, under `<lock>.takeover` (made exclusively). Two writers
 * that both found it stale must not both go ahead: the second's unlink would remove the lock the
 * first had just made. Under the guard, only a lock still stale goes. A guard left by a writer that
 * died in these few system calls is itself removed once stale. False: another writer is at it.
 */
async function removeStaleLock(lock: string): Promise<boolean> {
  const guard = `${lock}.takeover`;
  try {
    await (await open(guard, 'wx', 0o600)).close();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const held = await stat(guard).catch(() => null);
    if (held === null || !isStale(held.mtimeMs)) return false;
    await unlink(guard).catch(() => undefined);
    return true;
  }
  try {
    const held = await stat(lock).catch(() => null);
    if (held !== null && isStale(held.mtimeMs)) await unlink(lock).catch(() => undefined);
    return true;
  } finally {
    await unlink(guard).catch(() => undefined);
  }
}
