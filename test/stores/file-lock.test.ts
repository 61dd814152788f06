/**
 * The key file's lock between processes (src/stores/memory/file-lock.ts): a living holder keeps its
 * lock however long its cycle takes, and at the end removes only the lock it made.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { withFileLock } from '../../src/stores/memory/file-lock.js';

const directory = mkdtempSync(join(tmpdir(), 'rg-lock-'));
t.teardown(() => rmSync(directory, { recursive: true, force: true }));

t.test('a holder whose cycle outlasts the stale age keeps its lock: the next writer waits for it', async () => {
  const path = join(directory, 'slow', 'keys.json');
  const timing = { staleMs: 200, waitMs: 5_000 };
  const events: string[] = [];
  const first = withFileLock(
    path,
    async () => {
      events.push('first in');
      await sleep(800);
      events.push('first out');
    },
    timing,
  );
  await sleep(50);
  await withFileLock(path, async () => void events.push('second in'), timing);
  await first;
  assert.deepEqual(events, ['first in', 'first out', 'second in']);
  assert.equal(existsSync(`${path}.lock`), false);
});

t.test('a holder whose lock was taken over meanwhile leaves the new holder\'s lock in place', async () => {
  const path = join(directory, 'taken', 'keys.json');
  await withFileLock(path, async () => {
    // What a takeover does: the old lock goes, another writer makes its own.
    unlinkSync(`${path}.lock`);
    writeFileSync(`${path}.lock`, '', { flag: 'wx' });
  });
  assert.equal(existsSync(`${path}.lock`), true, 'the other writer\'s lock is still there');
});
