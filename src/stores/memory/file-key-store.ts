/**
 * Accounts and keys in a JSON file, for memory (sandbox) mode: the operator CLI writes the file and
 * a running gateway sees the change without a restart, because lookups re-read the file when it
 * was replaced (checked at most every `checkIntervalMs`). A reload announces every key whose record
 * (or whose account's record) changed through `onInvalidation`, so caches drop revoked keys and the
 * keys of a disabled account; once a listener is registered the
 * file is also checked on that interval, so a revocation by the CLI reaches cached keys promptly.
 *
 * Writes replace the file atomically (temp file, fsync, rename; mode 0600) after re-reading it, and
 * are serialised within a process and, by a lock file beside it, across processes: the CLI writing
 * while the gateway does (an admin API call, a rotation) loses neither change.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { withFileLock } from './file-lock.js';
import { jsonSyntaxError } from '../../json-syntax.js';
import { ownEntry } from '../../own-entry.js';
import { byCreation, keyWithAccount, copyOrNull, InvalidationListeners, refuseClaimed, sameRecord } from '../key-records.js';
import type { AccountRecord, ApiKeyRecord, KeyStore } from '../types.js';

interface KeyFile {
  accounts: Record<string, AccountRecord>;
  keys: Record<string, ApiKeyRecord>;
  /** The ids of deleted accounts: never an account's again (KeyStore.deleteAccount). */
  retiredAccounts?: string[];
}

export interface FileKeyStoreOptions {
  now?: () => number;
  /** Lookups look for a newer file at most this often. */
  checkIntervalMs?: number;
}

export class FileKeyStore implements KeyStore {
  private readonly now: () => number;
  private readonly checkIntervalMs: number;
  private readonly listeners = new InvalidationListeners();
  private data: KeyFile = { accounts: {}, keys: {} };
  private loaded = false;
  /** Identity of the file last read (inode, mtime, size); null when there was no file. */
  private fileVersion: string | null = null;
  private lastCheck = Number.NEGATIVE_INFINITY;
  private reloading: Promise<void> | null = null;
  /** This process's read-modify-write cycles, one after the other. */
  private writes: Promise<void> = Promise.resolve();
  private watcher: NodeJS.Timeout | undefined;

  constructor(
    readonly path: string,
    options: FileKeyStoreOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.checkIntervalMs = options.checkIntervalMs ?? 250;
  }

  async putAccount(account: AccountRecord): Promise<void> {
    await this.update((data) => {
      data.accounts[account.id] = structuredClone(account);
    });
  }

  async replaceAccount(account: AccountRecord, expected: AccountRecord | null): Promise<boolean> {
    let written = false;
    await this.update((data) => {
      const stored = ownEntry(data.accounts, account.id);
      written = sameRecord(stored, expected) && !(expected === null && data.retiredAccounts?.includes(account.id) === true);
      if (!written) return;
      // Under the file lock, over the file as read: of two processes claiming one customer, the second sees the first.
      refuseClaimed(Object.values(data.accounts), account, stored);
      data.accounts[account.id] = structuredClone(account);
    });
    return written;
  }

  async deleteAccount(expected: AccountRecord): Promise<string[] | null> {
    let gone: string[] | null = null;
    await this.update((data) => {
      if (!sameRecord(ownEntry(data.accounts, expected.id), expected)) return;
      delete data.accounts[expected.id];
      data.retiredAccounts = [...(data.retiredAccounts ?? []), expected.id];
      gone = dropKeys(data, expected.id);
    });
    return gone;
  }

  async getAccount(id: string): Promise<AccountRecord | null> {
    await this.refresh();
    return copyOrNull(ownEntry(this.data.accounts, id));
  }

  async listAccounts(): Promise<AccountRecord[]> {
    await this.refresh();
    return byCreation(structuredClone(Object.values(this.data.accounts)));
  }

  async putKey(key: ApiKeyRecord): Promise<void> {
    await this.update((data) => {
      data.keys[key.id] = structuredClone(key);
    });
  }

  async replaceKey(key: ApiKeyRecord, expected: ApiKeyRecord): Promise<boolean> {
    let written = false;
    await this.update((data) => {
      written = sameRecord(ownEntry(data.keys, key.id), expected);
      if (written) data.keys[key.id] = structuredClone(key);
    });
    return written;
  }

  async getKey(id: string): Promise<ApiKeyRecord | null> {
    await this.refresh();
    // An unknown id may be a key the CLI wrote since the last check: look at the file once more.
    if (ownEntry(this.data.keys, id) === undefined) await this.refresh(true);
    return copyOrNull(ownEntry(this.data.keys, id));
  }

  getKeyWithAccount(id: string): Promise<{ key: ApiKeyRecord; account: AccountRecord } | null> {
    return keyWithAccount(this, id);
  }

  async listKeys(accountId?: string): Promise<ApiKeyRecord[]> {
    await this.refresh();
    const keys = Object.values(this.data.keys).filter((key) => accountId === undefined || key.accountId === accountId);
    return byCreation(structuredClone(keys));
  }

  /** Other processes learn of a change when they reload the file; this tells this process's listeners. */
  async publishInvalidation(keyId: string): Promise<void> {
    this.listeners.notify(keyId);
  }

  onInvalidation(listener: (keyId: string | null) => void): void {
    this.listeners.add(listener);
    if (this.watcher) return;
    // A broken file must not crash the process: lookups will report it.
    this.watcher = setInterval(() => void this.refresh().catch(() => undefined), this.checkIntervalMs);
    this.watcher.unref();
  }

  close(): void {
    clearInterval(this.watcher);
    this.watcher = undefined;
  }

  /** Concurrent callers share one reload, so none of them reads the data before it is loaded. */
  private async refresh(force = false): Promise<void> {
    while (this.reloading) await this.reloading;
    const now = this.now();
    if (!force && now - this.lastCheck < this.checkIntervalMs) return;
    this.lastCheck = now;
    this.reloading = this.reload();
    try {
      await this.reloading;
    } finally {
      this.reloading = null;
    }
  }

  private async reload(): Promise<void> {
    const file = await readKeyFile(this.path, this.loaded ? this.fileVersion : undefined);
    if (file === 'unchanged') return;
    const previous = this.data;
    this.data = file.data;
    this.fileVersion = file.version;
    if (this.loaded) for (const keyId of changedKeys(previous, file.data)) this.listeners.notify(keyId);
    this.loaded = true;
  }

  private update(change: (data: KeyFile) => void): Promise<void> {
    const cycle = this.writes.then(() =>
      withFileLock(this.path, async () => {
        // Read first, so that what another process wrote since our last look is kept.
        await this.refresh(true);
        const next = structuredClone(this.data);
        change(next);
        this.fileVersion = await writeAtomically(this.path, `${JSON.stringify(next, null, 2)}\n`);
        this.data = next;
      }),
    );
    this.writes = cycle.catch(() => undefined);
    return cycle;
  }
}

/** The account's keys deleted (KeyStore.deleteAccount); their ids. */
function dropKeys(data: KeyFile, accountId: string): string[] {
  const gone = Object.values(data.keys).filter((key) => key.accountId === accountId).map((key) => key.id);
  for (const id of gone) delete data.keys[id];
  return gone;
}

async function readKeyFile(
  path: string,
  knownVersion: string | null | undefined,
): Promise<{ data: KeyFile; version: string | null } | 'unchanged'> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return knownVersion === null ? 'unchanged' : { data: { accounts: {}, keys: {} }, version: null };
  }
  try {
    // Version and content come from the same open file, so a concurrent rename cannot mix them.
    const version = versionOf(await handle.stat());
    if (version === knownVersion) return 'unchanged';
    return { data: parseKeyFile(path, await handle.readFile('utf8')), version };
  } finally {
    await handle.close();
  }
}

function parseKeyFile(path: string, text: string): KeyFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`key file ${path} is not valid JSON: ${jsonSyntaxError(text, error)}`);
  }
  const file = parsed as Partial<KeyFile> | null;
  if (!isObject(file) || !isObject(file.accounts) || !isObject(file.keys)) {
    throw new Error(`key file ${path} must be an object with "accounts" and "keys" objects`);
  }
  if (file.retiredAccounts !== undefined && (!Array.isArray(file.retiredAccounts) || !file.retiredAccounts.every((id) => typeof id === 'string'))) {
    throw new Error(`key file ${path}: "retiredAccounts" must be an array of account ids`);
  }
  return file as KeyFile;
}

/** Only under withFileLock, which made the directory. */
async function writeAtomically(path: string, text: string): Promise<string> {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await open(temporary, 'wx', 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
    // Rename keeps inode and mtime, so this is the version readers will see.
    const version = versionOf(await handle.stat());
    await handle.close();
    await rename(temporary, path);
    return version;
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}

/** A rename gives a new inode, so two writes within one mtime tick still differ. */
function versionOf(stats: { ino: number; mtimeMs: number; size: number }): string {
  return `${stats.ino}:${stats.mtimeMs}:${stats.size}`;
}

/**
 * Keys whose record changed, and every key of an account whose record changed: a cached lookup
 * holds the account too (a disabled account, a new upstream customer).
 */
function changedKeys(before: KeyFile, after: KeyFile): string[] {
  const changed = (a: unknown, b: unknown) => JSON.stringify(a) !== JSON.stringify(b);
  const ids = new Set([...Object.keys(before.keys), ...Object.keys(after.keys)]);
  return [...ids].filter((id) => {
    const accountId = (ownEntry(after.keys, id) ?? ownEntry(before.keys, id))?.accountId ?? '';
    return changed(ownEntry(before.keys, id), ownEntry(after.keys, id)) || changed(ownEntry(before.accounts, accountId), ownEntry(after.accounts, accountId));
  });
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
