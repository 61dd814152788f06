// The audit log file: records that arrive together are synced together, a stalled disk turns reads
// away at a bound instead of holding them all, and a failed write fails only its own batch.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { FileAuditLog } from '../../src/audit.js';

type Method = 'datasync' | 'appendFile';

/** Replaces a FileHandle method for every handle (they share one prototype) until the test ends. */
async function patchFileHandle(t: Test, method: Method, replace: (original: (...args: unknown[]) => Promise<void>) => (...args: unknown[]) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'audit-proto-'));
  const probe = await open(join(dir, 'probe'), 'w');
  const prototype = Object.getPrototypeOf(probe) as Record<Method, (this: FileHandle, ...args: unknown[]) => Promise<void>>;
  await probe.close();
  rmSync(dir, { recursive: true, force: true });
  const original = prototype[method];
  prototype[method] = function (this: FileHandle, ...args: unknown[]) {
    return replace((...a) => original.apply(this, a))(...args);
  };
  t.teardown(() => {
    prototype[method] = original;
  });
}

function tempFile(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'audit-file-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'audit', 'credentials.log');
}

t.test('records written together share a sync, and every line is whole', async (t) => {
  let syncs = 0;
  await patchFileHandle(t, 'datasync', (original) => async () => {
    syncs += 1;
    await original();
  });
  const path = tempFile(t);
  const log = new FileAuditLog<{ n: number; pad: string }>(path);
  await Promise.all(Array.from({ length: 50 }, (_, n) => log.write({ n, pad: 'x'.repeat(500) })));
  await log.close();
  const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
  t.same(lines.map((l) => (JSON.parse(l) as { n: number }).n), Array.from({ length: 50 }, (_, n) => n), 'every record, in order, each on its own line');
  t.ok(syncs <= 2, `50 records arriving together took ${syncs} syncs (one a record before)`);
});

t.test('a stalled disk turns records away past the bound, and the waiting ones are written when it resumes', async (t) => {
  let resume!: () => void;
  const stalled = new Promise<void>((r) => (resume = r));
  await patchFileHandle(t, 'datasync', (original) => async () => {
    await stalled;
    await original();
  });
  const path = tempFile(t);
  const log = new FileAuditLog<{ n: number }>(path, 3);
  const first = log.write({ n: 0 });
  // The first is being synced; three more may wait for the disk, a fifth is refused at once.
  const waiting = [1, 2, 3].map((n) => log.write({ n }));
  await t.rejects(log.write({ n: 4 }), /3 records already wait for the disk/);
  resume();
  await first;
  await Promise.all(waiting);
  await log.close();
  t.same(readFileSync(path, 'utf8').trimEnd().split('\n').map((l) => (JSON.parse(l) as { n: number }).n), [0, 1, 2, 3]);
});

t.test('a failed append fails its own batch only', async (t) => {
  let failNext = true;
  await patchFileHandle(t, 'appendFile', (original) => async (...args) => {
    if (failNext) {
      failNext = false;
      throw new Error('ENOSPC: no space left on device');
    }
    await original(...args);
  });
  const path = tempFile(t);
  const log = new FileAuditLog<{ n: number }>(path);
  await t.rejects(log.write({ n: 1 }), /ENOSPC/);
  await log.write({ n: 2 });
  await log.close();
  t.same(readFileSync(path, 'utf8'), '{"n":2}\n');
});
