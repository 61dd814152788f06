/**
 * Idempotency records in process memory (contract §5). Each method runs in one synchronous
 * section, so `begin` is an atomic claim. Mirrors src/stores/redis/lua/idempotency-*.lua.
 */
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { type BeginRequest, type BeginResult, type IdempotencyScope, type IdempotencyStore, type StoredResponse, StoreUnavailableError } from '../types.js';

interface IdempotencyRecord {
  accountId: string;
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
   * this many live, a new key is refused as the store being unavailable (503, nothing sent). One
   * account holds at most a quarter of them, so that its keys cannot refuse every other account's.
   */
  maxRecords?: number;
}

/** The share of maxRecords one account may hold live. */
const ACCOUNT_SHARE = 4;

/** A full store looks for expired records at most this often (each look reads every record). */
const PURGE_INTERVAL_MS = 1_000;

function newRandomId(): string {
  return randomBytes(16).toString('base64url');
}

export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly now: () => number;
  private readonly records: LRUCache<string, IdempotencyRecord>;
  private readonly maxRecords: number;
  private readonly maxPerAccount: number;
  /** Records held per account (expired ones until they are purged). */
  private readonly perAccount = new Map<string, number>();
  private purgedAt = -Infinity;

  constructor(options: MemoryIdempotencyStoreOptions = {}) {
    const now = options.now ?? Date.now;
    this.now = now;
    this.maxRecords = options.maxRecords ?? 50_000;
    this.maxPerAccount = Math.max(1, Math.ceil(this.maxRecords / ACCOUNT_SHARE));
    this.records = new LRUCache({
      max: this.maxRecords,
      perf: { now },
      ttlResolution: 0,
      // Deleted, expired, or replaced by another record (never called for the same record set again).
      dispose: (record) => this.count(record.accountId, -1),
    });
  }

  private count(accountId: string, change: number): void {
    const held = (this.perAccount.get(accountId) ?? 0) + change;
    if (held > 0) this.perAccount.set(accountId, held);
    else this.perAccount.delete(accountId);
  }

  /** Room for one more record of the account, expired ones removed first; never by evicting a live one. */
  private makeRoom(now: number, accountId: string): void {
    const full = () => this.records.size >= this.maxRecords;
    const accountFull = () => (this.perAccount.get(accountId) ?? 0) >= this.maxPerAccount;
    if (!full() && !accountFull()) return;
    if (now - this.purgedAt >= PURGE_INTERVAL_MS) {
      this.purgedAt = now;
      this.records.purgeStale();
    }
    if (full()) {
      throw new StoreUnavailableError(`the memory idempotency store holds its maximum of ${this.maxRecords} live records (idempotency.memoryMaxRecords)`);
    }
    if (accountFull()) {
      throw new StoreUnavailableError(
        `account ${accountId} holds its share of the memory idempotency store, ${this.maxPerAccount} live records (a quarter of idempotency.memoryMaxRecords)`,
      );
    }
  }

  async begin(request: BeginRequest): Promise<BeginResult> {
    const now = this.now();
    const id = recordId(request);
    const record = this.records.get(id);
    if (!record) {
      this.makeRoom(now, request.accountId);
      const created: IdempotencyRecord = {
        accountId: request.accountId,
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
      this.count(request.accountId, 1);
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
    if (waitUntil > now) return { kind: 'in_progress', retryAfterMs: askAgainAfter(waitUntil - now, leaseUntil, request.leaseMs, now) };
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

/**
 * A live holder may answer any moment (then replayed): ask again after as long as it has run (since
 * its lease was last set), at least a second; a client that follows this backs off by doubling.
 * Past the holder, only the whole wait decides anything.
 */
function askAgainAfter(waitMs: number, leaseUntil: number, leaseMs: number, now: number): number {
  if (leaseUntil <= now) return waitMs;
  return Math.min(waitMs, Math.max(1_000, now - (leaseUntil - leaseMs)));
}

/** Scoped to the account and the client's key only: the same key on another endpoint must conflict. */
function recordId(scope: IdempotencyScope): string {
  return JSON.stringify([scope.accountId, scope.key]);
}
