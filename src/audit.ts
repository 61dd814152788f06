/**
 * The credentials audit log (contract §6): one JSON line per credentials read, whatever its outcome,
 * written and flushed to disk before the response leaves. Kept apart from the application log.
 * The pipeline writes the records (src/http/audited.ts), for every route marked `audited`. The
 * admin audit log (src/admin/audit.ts) is another file of the same kind, with its own records.
 */
import { mkdirSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { AnyReason } from './errors.js';

export interface AuditRecord {
  time: string;
  event: 'credentials.read';
  request_id: string;
  /** The key's id: the authenticated key's, else parsed from the key sent; null when none could be. */
  key_id: string | null;
  /** Null when the request was not authenticated. */
  account_id: string | null;
  /** As sent in the path (it may be invalid: a 400 is audited too). */
  service_id: string;
  source_ip: string;
  /** Truncated, control characters removed: it is the client's text. */
  user_agent: string;
  /** The names of the fields returned (never their values). */
  fields: string[];
  outcome: 'returned' | 'denied' | 'not_found' | 'failed';
  status: number;
  /** The problem's reason; null when the credentials were returned. */
  reason: AnyReason | null;
}

export interface AuditLog<R extends object = AuditRecord> {
  /** Resolves once the record is durable; rejects when it could not be written. */
  write(record: R): Promise<void>;
  close(): Promise<void>;
}

export class FileAuditLog<R extends object = AuditRecord> implements AuditLog<R> {
  private handle: Promise<FileHandle> | undefined;
  /** Appends are chained so lines never interleave. */
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly path: string) {}

  private file(): Promise<FileHandle> {
    if (!this.handle) {
      mkdirSync(dirname(this.path), { recursive: true });
      this.handle = open(this.path, 'a', 0o600);
      this.handle.catch(() => (this.handle = undefined));
    }
    return this.handle;
  }

  write(record: R): Promise<void> {
    const line = `${JSON.stringify(record)}\n`;
    const next = this.tail.then(async () => {
      const file = await this.file();
      await file.appendFile(line);
      await file.datasync();
    });
    this.tail = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    await this.tail;
    if (this.handle) await (await this.handle).close();
    this.handle = undefined;
  }
}

/** For tests: keeps records in memory, and can be told to fail. */
export class MemoryAuditLog<R extends object = AuditRecord> implements AuditLog<R> {
  readonly records: R[] = [];
  failing = false;

  async write(record: R): Promise<void> {
    if (this.failing) throw new Error('audit log unavailable');
    this.records.push(record);
  }

  async close(): Promise<void> {}
}

/** `log`, telling `onWrite` how each record's write ended (metrics). */
export function observedAuditLog(log: AuditLog, onWrite: (outcome: AuditRecord['outcome'], written: boolean) => void): AuditLog {
  return {
    async write(record) {
      try {
        await log.write(record);
      } catch (error) {
        onWrite(record.outcome, false);
        throw error;
      }
      onWrite(record.outcome, true);
    },
    close: () => log.close(),
  };
}
