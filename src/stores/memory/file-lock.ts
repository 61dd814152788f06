/**
 * A lock between processes for a file's read-change-write cycle: `<path>.lock`, made exclusively.
 * The key file's writers (the gateway and the CLI) hold it; nothing else is needed on one machine.
 */
import { type FileHandle, mkdir, open, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

/** A write cycle takes milliseconds: a lock this old was left by a writer that died. */
const LOCK_STALE_MS = 10_000;
/** How long a writer waits for another's cycle before it gives up, naming the lock. */
const LOCK_WAIT_MS = 5_000;

export interface FileLockTiming {
  /** A lock not touched for this long is taken over; its holder touches it four times as often. */
  staleMs?: number;
  waitMs?: number;
}

/**
 * Runs `work` holding `<path>.lock` (created exclusively; removed after). A stale lock (a writer
 * died holding it) is taken over by one writer at a time (removeStaleLock). A living holder keeps
 * its lock fresh, however long its cycle takes (a paused process, a slow disk), and removes only
 * the lock it made: one taken over meanwhile belongs to another writer.
 */
export async function withFileLock(path: string, work: () => Promise<void>, timing: FileLockTiming = {}): Promise<void> {
  const { staleMs = LOCK_STALE_MS, waitMs = LOCK_WAIT_MS } = timing;
  const lock = `${path}.lock`;
  await mkdir(dirname(path), { recursive: true });
  const deadline = Date.now() + waitMs;
  let handle: FileHandle;
  for (let delayMs = 2; ; delayMs = Math.min(delayMs * 2, 50)) {
    try {
      handle = await open(lock, 'wx', 0o600);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const held = await stat(lock).catch(() => null);
    // Removed: try again at once. Another writer taking it over: wait, as for a held lock.
    if (held !== null && isStale(held.mtimeMs, staleMs) && (await removeStaleLock(lock, staleMs))) continue;
    if (Date.now() > deadline) throw new Error(`key file ${path} stayed locked for ${waitMs} ms by another writer (${lock})`);
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  const { ino } = await handle.stat();
  const heartbeat = setInterval(() => {
    const now = new Date();
    handle.utimes(now, now).catch(() => undefined);
  }, staleMs / 4);
  heartbeat.unref();
  try {
    await work();
  } finally {
    clearInterval(heartbeat);
    // Compared while still open: the inode cannot be reused for another writer's lock meanwhile.
    const current = await stat(lock).catch(() => null);
    if (current?.ino === ino) await unlink(lock).catch(() => undefined);
    await handle.close().catch(() => undefined);
  }
}

function isStale(mtimeMs: number, staleMs: number): boolean {
  return Date.now() - mtimeMs > staleMs;
}

/**
 * Removes the lock if it is still stale, under `<lock>.takeover` (made exclusively). Two writers
 * that both found it stale must not both go ahead: the second's unlink would remove the lock the
 * first had just made. Under the guard, only a lock still stale goes. A guard left by a writer that
 * died in these few system calls is itself removed once stale. False: another writer is at it.
 */
async function removeStaleLock(lock: string, staleMs: number): Promise<boolean> {
  const guard = `${lock}.takeover`;
  try {
    await (await open(guard, 'wx', 0o600)).close();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const held = await stat(guard).catch(() => null);
    if (held === null || !isStale(held.mtimeMs, staleMs)) return false;
    await unlink(guard).catch(() => undefined);
    return true;
  }
  try {
    const held = await stat(lock).catch(() => null);
    if (held !== null && isStale(held.mtimeMs, staleMs)) await unlink(lock).catch(() => undefined);
    return true;
  } finally {
    await unlink(guard).catch(() => undefined);
  }
}
