import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t from 'tap';
import { pathToFileURL } from 'node:url';
import { FileKeyStore } from '../../src/stores/memory/index.js';
import type { AccountRecord, ApiKeyRecord } from '../../src/stores/types.js';
import { ManualClock, runKeyStoreConformance } from './conformance.js';

const directory = mkdtempSync(join(tmpdir(), 'rg-keys-'));
t.teardown(() => rmSync(directory, { recursive: true, force: true }));

let fileCounter = 0;
function freshPath(): string {
  fileCounter += 1;
  return join(directory, `case-${fileCounter}`, 'keys.json');
}

const ACCOUNT: AccountRecord = { id: 'acct_1', name: 'Example', upstreamId: '17', createdAt: '2026-03-01T00:00:00.000Z' };

function key(id: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id,
    accountId: ACCOUNT.id,
    name: id,
    scopes: ['read:products'],
    secretHash: 'ab'.repeat(32),
    createdAt: '2026-03-01T00:00:00.000Z',
    expiresAt: null,
    revokedAt: null,
    rateLimits: null,
    ...overrides,
  };
}

runKeyStoreConformance(t, 'file', async () => {
  const clock = new ManualClock();
  return { store: new FileKeyStore(freshPath(), { now: clock.now }), clock, close: async () => undefined };
});

t.test('file key store', async (t) => {
  t.test('persists across instances, in a file only its owner can read, without leftovers', async () => {
    const path = freshPath();
    await new FileKeyStore(path).putAccount(ACCOUNT);
    await new FileKeyStore(path).putKey(key('00000000000000aa'));

    const reopened = new FileKeyStore(path);
    assert.deepEqual(await reopened.getAccount(ACCOUNT.id), ACCOUNT);
    assert.deepEqual(await reopened.getKey('00000000000000aa'), key('00000000000000aa'));
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(join(path, '..')), ['keys.json']);
  });

  t.test('a missing file is an empty store', async () => {
    const store = new FileKeyStore(freshPath());
    assert.deepEqual(await store.listAccounts(), []);
    assert.equal(await store.getKey('00000000000000aa'), null);
  });

  t.test("sees a new key at once, and another writer's changes once the check interval has passed", async () => {
    const path = freshPath();
    const clock = new ManualClock();
    const gateway = new FileKeyStore(path, { now: clock.now, checkIntervalMs: 250 });
    const cli = new FileKeyStore(path);
    assert.equal(await gateway.getKey('00000000000000aa'), null);

    await cli.putKey(key('00000000000000aa'));
    assert.deepEqual(await gateway.getKey('00000000000000aa'), key('00000000000000aa'), 'an unknown id sends it to the file');
    const revoked = key('00000000000000aa', { revokedAt: '2026-03-02T00:00:00.000Z' });
    await cli.putKey(revoked);
    assert.deepEqual(await gateway.getKey('00000000000000aa'), key('00000000000000aa'), 'not looked at the file again yet');
    await clock.advance(250);
    assert.deepEqual(await gateway.getKey('00000000000000aa'), revoked);
  });

  t.test('announces the keys whose record changed on reload, and only those', async () => {
    const path = freshPath();
    const clock = new ManualClock();
    const cli = new FileKeyStore(path);
    await cli.putKey(key('00000000000000aa'));
    await cli.putKey(key('00000000000000bb'));
    const gateway = new FileKeyStore(path, { now: clock.now });
    const invalidated: Array<string | null> = [];
    gateway.onInvalidation((keyId) => invalidated.push(keyId));
    await gateway.listKeys();

    await cli.putKey(key('00000000000000aa', { revokedAt: '2026-03-02T00:00:00.000Z' }));
    await cli.putKey(key('00000000000000cc'));
    await clock.advance(250);
    await gateway.getKey('00000000000000aa');
    assert.deepEqual(invalidated.sort(), ['00000000000000aa', '00000000000000cc']);
  });

  t.test("announces every key of an account whose record changed (disabled by another process)", async () => {
    const path = freshPath();
    const clock = new ManualClock();
    const cli = new FileKeyStore(path);
    await cli.putAccount(ACCOUNT);
    await cli.putAccount({ ...ACCOUNT, id: 'acct_2' });
    await cli.putKey(key('00000000000000aa'));
    await cli.putKey(key('00000000000000bb'));
    await cli.putKey(key('00000000000000cc', { accountId: 'acct_2' }));
    const gateway = new FileKeyStore(path, { now: clock.now });
    const invalidated: Array<string | null> = [];
    gateway.onInvalidation((keyId) => invalidated.push(keyId));
    await gateway.listKeys();

    await cli.putAccount({ ...ACCOUNT, disabledAt: '2026-03-02T00:00:00.000Z' });
    await clock.advance(250);
    await gateway.getKey('00000000000000aa');
    assert.deepEqual(invalidated.sort(), ['00000000000000aa', '00000000000000bb']);
  });

  t.test('keeps what another writer added when it writes itself', async () => {
    const path = freshPath();
    const gateway = new FileKeyStore(path);
    const cli = new FileKeyStore(path);
    await gateway.putAccount(ACCOUNT);
    await cli.putKey(key('00000000000000aa'));
    await gateway.putKey(key('00000000000000bb'));
    const ids = (await new FileKeyStore(path).listKeys()).map((record) => record.id);
    assert.deepEqual(ids, ['00000000000000aa', '00000000000000bb']);
  });

  t.test('loses nothing when one process writes many records at once', async () => {
    const path = freshPath();
    const store = new FileKeyStore(path);
    const ids = Array.from({ length: 20 }, (_, index) => index.toString(16).padStart(16, '0'));
    await Promise.all(ids.map((id) => store.putKey(key(id))));
    assert.equal((await new FileKeyStore(path).listKeys()).length, 20);
  });

  t.test('loses nothing when two processes write at the same moment (the CLI beside a gateway)', async () => {
    const path = freshPath();
    // Two instances on one file share no in-process queue: they stand for two processes.
    const [gateway, cli] = [new FileKeyStore(path), new FileKeyStore(path)];
    const ids = Array.from({ length: 20 }, (_, index) => index.toString(16).padStart(16, '0'));
    await Promise.all(ids.map((id, index) => (index % 2 === 0 ? gateway : cli).putKey(key(id))));
    assert.deepEqual((await new FileKeyStore(path).listKeys()).map((record) => record.id).sort(), ids);
    assert.deepEqual(readdirSync(dirname(path)), ['keys.json'], 'no lock or temporary file left behind');
  });

  t.test('a lock left by a writer that died is taken over once stale', async () => {
    const path = freshPath();
    await new FileKeyStore(path).putAccount(ACCOUNT);
    writeFileSync(`${path}.lock`, '999999');
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${path}.lock`, old, old);
    await new FileKeyStore(path).putKey(key('00000000000000ee'));
    assert.equal((await new FileKeyStore(path).listKeys()).length, 1);
  });

  t.test('writers that find one stale lock at the same moment take it over one at a time: nothing is lost', async () => {
    // Each finds the dead writer's lock stale; only one may take it over, the others wait for it.
    for (let round = 0; round < 12; round += 1) {
      const path = freshPath();
      await new FileKeyStore(path).putAccount(ACCOUNT);
      writeFileSync(`${path}.lock`, '999999');
      const old = new Date(Date.now() - 60_000);
      utimesSync(`${path}.lock`, old, old);
      const ids = Array.from({ length: 8 }, (_, index) => `${round}`.padStart(8, '0') + index.toString(16).padStart(8, '0'));
      await Promise.all(ids.map((id) => new FileKeyStore(path).putKey(key(id))));
      assert.deepEqual((await new FileKeyStore(path).listKeys()).map((record) => record.id).sort(), ids, `round ${round}`);
      assert.deepEqual(readdirSync(dirname(path)), ['keys.json'], 'no lock or set-aside lock left behind');
    }
  });

  t.test('a writer waits while another takes a stale lock over, and goes ahead past a takeover left by a writer that died', async () => {
    const path = freshPath();
    await new FileKeyStore(path).putAccount(ACCOUNT);
    const old = new Date(Date.now() - 60_000);
    writeFileSync(`${path}.lock`, '');
    utimesSync(`${path}.lock`, old, old);
    writeFileSync(`${path}.lock.takeover`, '');
    let done = false;
    const write = new FileKeyStore(path).putKey(key('00000000000000e1')).then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(done, false, 'another writer is taking the lock over');
    utimesSync(`${path}.lock.takeover`, old, old);
    await write;
    assert.equal((await new FileKeyStore(path).listKeys()).length, 1);
    assert.deepEqual(readdirSync(dirname(path)), ['keys.json'], 'the dead takeover and the stale lock are gone');
  });

  t.test('a key issued by another process works without a restart', async () => {
    const path = freshPath();
    const gateway = new FileKeyStore(path, { checkIntervalMs: 0 });
    assert.equal(await gateway.getKey('00000000000000dd'), null);

    const module = pathToFileURL(join(import.meta.dirname, '../../src/stores/memory/file-key-store.ts')).href;
    const record = JSON.stringify(key('00000000000000dd'));
    const script = `const { FileKeyStore } = await import(${JSON.stringify(module)});
      await new FileKeyStore(${JSON.stringify(path)}).putKey(${record});`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);

    assert.deepEqual(await gateway.getKey('00000000000000dd'), key('00000000000000dd'));
  });

  t.test('refuses a file that is not a key file, naming it', async () => {
    const path = freshPath();
    await new FileKeyStore(path).putAccount(ACCOUNT);
    writeFileSync(path, '{"accounts": []}');
    await assert.rejects(new FileKeyStore(path).listKeys(), new RegExp(`key file ${path}`));
    writeFileSync(path, 'not json');
    await assert.rejects(new FileKeyStore(path).listKeys(), /is not valid JSON/);
  });
});
