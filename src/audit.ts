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

/**
 * Records waiting for the disk at most: a disk that stalls turns credentials reads away (503) at
 * once, instead of holding every request (and its answer) for as long as the disk does.
 */
export const AUDIT_QUEUE_LIMIT = 10_000;

interface Waiting {
  line: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Appends with group commit: the records that arrive while one batch is being written and synced go
 * to disk together in the next one (one append, one datasync). One sync a record, in turn, made each
 * read wait for the syncs of every read before it.
 */
export class FileAuditLog<R extends object = AuditRecord> implements AuditLog<R> {
  private handle: Promise<FileHandle> | undefined;
  private waiting: Waiting[] = [];
  /** The batch being written; lines never interleave because one batch is written at a time. */
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly path: string,
    private readonly queueLimit = AUDIT_QUEUE_LIMIT,
  ) {}

  private file(): Promise<FileHandle> {
    if (!this.handle) {
      mkdirSync(dirname(this.path), { recursive: true });
      this.handle = open(this.path, 'a', 0o600);
      this.handle.catch(() => (this.handle = undefined));
    }
    return this.handle;
  }

  write(record: R): Promise<void> {
    if (this.waiting.length >= this.queueLimit) {
      return Promise.reject(new Error(`audit log ${this.path}: ${this.queueLimit} records already wait for the disk`));
    }
    const line = `${JSON.stringify(record)}\n`;
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ line, resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  private async flush(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting;
      this.waiting = [];
      try {
        const file = await this.file();
        await file.appendFile(batch.map((w) => w.line).join(''));
        await file.datasync();
        for (const w of batch) w.resolve();
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    this.flushing = undefined;
  }

  async close(): Promise<void> {
    await this.flushing;
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
