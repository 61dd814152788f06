/**
 * Idempotency records in process memory (contract §5). Each method runs in one synchronous
 * section, so `begin` is an atomic claim. Mirrors src/stores/redis/lua/idempotency-*.lua.
 */
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { type BeginRequest, type BeginResult, type IdempotencyScope, type IdempotencyStore, type StoredResponse, StoreUnavailableError } from '../types.js';

interface IdempotencyRecord {
  state: 'in_progress' | 'completed' | 'unknown';
  token: string;
  /** Names this use of the key; kept across retries, new once the record has expired. */
  recordId: string;
  fingerprint: string;
  endpoint: string;
  /** Time of the first request: the age that decides staleness counts from here. */
  createdAt: number;
  leaseUntil: number;
  /** The holder's settle time (BeginRequest.settleMs): markSent keeps the record at least that long. */
  settleMs: number;
  /** Time of the last write-ahead mark; null while nothing was sent. */
  sentAt: number | null;
  /** The token that set the first write-ahead mark (unmarkSent takes back only its own). */
  sentBy: string | null;
  response: StoredResponse | null;
}

export interface MemoryIdempotencyStoreOptions {
  now?: () => number;
  /**
   * Records kept at most. None is forgotten before it expires (a retry would run again): with
   * this many live, a new key is refused as the store being unavailable (503, nothing sent).
   */
  maxRecords?: number;
}

/** A full store looks for expired records at most this often (each look reads every record). */
const PURGE_INTERVAL_MS = 1_000;

function newRandomId(): string {
  return randomBytes(16).toString('base64url');
}

export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly now: () => number;
  private readonly records: LRUCache<string, IdempotencyRecord>;
  private readonly maxRecords: number;
  private purgedAt = -Infinity;

  constructor(options: MemoryIdempotencyStoreOptions = {}) {
    const now = options.now ?? Date.now;
    this.now = now;
    this.maxRecords = options.maxRecords ?? 50_000;
    this.records = new LRUCache({ max: this.maxRecords, perf: { now }, ttlResolution: 0 });
  }

  /** Room for one more record, expired ones removed first; never by evicting a live one. */
  private makeRoom(now: number): void {
    if (this.records.size < this.maxRecords) return;
    if (now - this.purgedAt >= PURGE_INTERVAL_MS) {
      this.purgedAt = now;
      this.records.purgeStale();
    }
    if (this.records.size >= this.maxRecords) {
      throw new StoreUnavailableError(`the memory idempotency store holds its maximum of ${this.maxRecords} live records (idempotency.memoryMaxRecords)`);
    }
  }

  async begin(request: BeginRequest): Promise<BeginResult> {
    const now = this.now();
    const id = recordId(request);
    const record = this.records.get(id);
    if (!record) {
      this.makeRoom(now);
      const created: IdempotencyRecord = {
        state: 'in_progress',
        token: newRandomId(),
        recordId: newRandomId(),
        fingerprint: request.fingerprint,
        endpoint: request.endpoint,
        createdAt: now,
        leaseUntil: now + request.leaseMs,
        settleMs: request.settleMs,
        sentAt: null,
        sentBy: null,
        response: null,
      };
      this.records.set(id, created, { ttl: request.retentionMs });
      return { kind: 'acquired', token: created.token, recordId: created.recordId, sentAt: null };
    }
    // Age counts from the first request; past it (more than the window: the spec replays "within
    // one hour") every use is stale, whatever the record holds.
    if (request.staleAfterMs !== null && now - record.createdAt > request.staleAfterMs) return { kind: 'stale' };
    if (record.fingerprint !== request.fingerprint || record.endpoint !== request.endpoint) return { kind: 'conflict' };
    if (record.state === 'completed' && record.response) return { kind: 'replay', response: structuredClone(record.response) };
    // A live holder, or a sent write upstream may still be working on: wait for both.
    const leaseUntil = record.state === 'in_progress' ? record.leaseUntil : 0;
    const waitUntil = Math.max(leaseUntil, record.sentAt === null ? 0 : record.sentAt + request.settleMs);
    if (waitUntil > now) return { kind: 'in_progress', retryAfterMs: waitUntil - now };
    // Unknown outcome, or a holder that died: the old token is void; the new holder reconciles
    // when something was sent, else executes fresh.
    record.state = 'in_progress';
    record.token = newRandomId();
    record.leaseUntil = now + request.leaseMs;
    record.settleMs = request.settleMs;
    return { kind: 'acquired', token: record.token, recordId: record.recordId, sentAt: record.sentAt };
  }

  async complete(scope: IdempotencyScope, token: string, response: StoredResponse): Promise<void> {
    const record = this.held(scope, token);
    if (!record) return;
    record.state = 'completed';
    record.leaseUntil = 0;
    record.response = structuredClone(response);
  }

  async release(scope: IdempotencyScope, token: string): Promise<void> {
    const record = this.held(scope, token);
    if (!record) return;
    if (record.sentAt === null) this.records.delete(recordId(scope));
    else this.unknown(record);
  }

  async markUnknown(scope: IdempotencyScope, token: string): Promise<void> {
    const record = this.held(scope, token);
    if (record) this.unknown(record);
  }

  async markSent(scope: IdempotencyScope, token: string, leaseMs: number): Promise<boolean> {
    const record = this.held(scope, token);
    if (record?.state !== 'in_progress') return false;
    const now = this.now();
    if (record.sentAt === null) record.sentBy = token;
    record.sentAt = now;
    record.leaseUntil = now + leaseMs;
    // A write sent near the end of the retention: the record stays until it has settled, or a
    // request after the expiry would be claimed afresh and send it again while it may still run.
    const id = recordId(scope);
    if (this.records.getRemainingTTL(id) < record.settleMs) this.records.set(id, record, { ttl: record.settleMs });
    return true;
  }

  async unmarkSent(scope: IdempotencyScope, token: string): Promise<void> {
    const record = this.held(scope, token);
    if (record?.state !== 'in_progress' || record.sentBy !== token) return;
    record.sentAt = null;
    record.sentBy = null;
  }

  private unknown(record: IdempotencyRecord): void {
    record.state = 'unknown';
    record.leaseUntil = 0;
  }

  /** The record, when `token` still holds it. Records are changed in place, keeping their expiry. */
  private held(scope: IdempotencyScope, token: string): IdempotencyRecord | undefined {
    const record = this.records.get(recordId(scope));
    return record?.token === token ? record : undefined;
  }
}

/** Scoped to the account and the client's key only: the same key on another endpoint must conflict. */
function recordId(scope: IdempotencyScope): string {
  return JSON.stringify([scope.accountId, scope.key]);
}
