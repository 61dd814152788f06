/** Idempotency records in Redis; every step is one script (lua/idempotency-*.lua). */
import { randomBytes } from 'node:crypto';
import { accountTag } from '../rate-policies.js';
import { StoreUnavailableError } from '../types.js';
import type { BeginRequest, BeginResult, IdempotencyScope, IdempotencyStore, StoredResponse } from '../types.js';
import type { RedisConnection } from './connection.js';
import { LuaScript } from './lua-script.js';

export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly scripts = {
    begin: LuaScript.load('idempotency-begin'),
    complete: LuaScript.load('idempotency-complete'),
    release: LuaScript.load('idempotency-release'),
    markUnknown: LuaScript.load('idempotency-mark-unknown'),
    markSent: LuaScript.load('idempotency-mark-sent'),
    unmarkSent: LuaScript.load('idempotency-unmark-sent'),
  };

  constructor(
    private readonly redis: RedisConnection,
    /**
     * Where replicas exist: claims and write-ahead marks wait (Redis WAIT) until this many replicas
     * have them, at most `timeoutMs`; fewer is treated as the store being unavailable. Null: no wait.
     */
    private readonly replicaAcks: { replicas: number; timeoutMs: number } | null = null,
  ) {}

  async begin(request: BeginRequest): Promise<BeginResult> {
    return parseBeginReply(
      await this.evalDurable(
        this.scripts.begin,
        [this.recordKey(request)],
        [
          request.fingerprint,
          request.endpoint,
          Math.ceil(request.leaseMs),
          Math.ceil(request.retentionMs),
          request.staleAfterMs ?? '',
          Math.ceil(request.settleMs),
          randomBytes(16).toString('base64url'),
          randomBytes(12).toString('base64url'),
        ],
        (reply) => {
          const claim = parseBeginReply(reply);
          return claim.kind === 'acquired' ? this.release(request, claim.token) : undefined;
        },
      ),
    );
  }

  async markSent(scope: IdempotencyScope, token: string, leaseMs: number): Promise<boolean> {
    return (await this.evalDurable(this.scripts.markSent, [this.recordKey(scope)], [token, Math.ceil(leaseMs)])) === 1;
  }

  async unmarkSent(scope: IdempotencyScope, token: string): Promise<void> {
    await this.redis.evalScript(this.scripts.unmarkSent, [this.recordKey(scope)], [token]);
  }

  /**
   * A claim or a write-ahead mark: with replicas configured, it must reach them before it counts.
   * What stands on the primary alone is taken back by `takeBack` (a claim; a mark is taken back by
   * the caller, unmarkSent), at best: a claim left would refuse the retry of a request told that
   * nothing ran as in progress for the whole lease.
   */
  private async evalDurable(
    script: LuaScript,
    keys: string[],
    args: Array<string | number>,
    takeBack?: (reply: unknown) => Promise<void> | undefined,
  ): Promise<unknown> {
    if (!this.replicaAcks) return this.redis.evalScript(script, keys, args);
    const { reply, acknowledged } = await this.redis.evalScriptAndWait(script, keys, args, this.replicaAcks);
    if (acknowledged < this.replicaAcks.replicas) {
      await takeBack?.(reply)?.catch(() => undefined);
      throw new StoreUnavailableError(
        `idempotency record reached ${acknowledged} of ${this.replicaAcks.replicas} replicas within ${this.replicaAcks.timeoutMs} ms`,
      );
    }
    return reply;
  }

  async complete(scope: IdempotencyScope, token: string, response: StoredResponse): Promise<void> {
    const args = [token, response.status, JSON.stringify(response.headers), response.body];
    await this.redis.evalScript(this.scripts.complete, [this.recordKey(scope)], args);
  }

  async release(scope: IdempotencyScope, token: string): Promise<void> {
    await this.redis.evalScript(this.scripts.release, [this.recordKey(scope)], [token]);
  }

  async markUnknown(scope: IdempotencyScope, token: string): Promise<void> {
    await this.redis.evalScript(this.scripts.markUnknown, [this.recordKey(scope)], [token]);
  }

  /** Scoped to the account and the client's key only: the same key on another endpoint must conflict. */
  private recordKey(scope: IdempotencyScope): string {
    return this.redis.key(`${accountTag(scope.accountId)}:idem:${encodeURIComponent(scope.key)}`);
  }
}

function parseBeginReply(reply: unknown): BeginResult {
  const [kind, ...rest] = Array.isArray(reply) ? (reply as unknown[]) : [];
  switch (kind) {
    case 'acquired':
      return { kind, token: String(rest[0]), recordId: String(rest[1]), sentAt: rest[2] === '' ? null : Number(rest[2]) };
    case 'replay':
      return {
        kind,
        response: {
          status: Number(rest[0]),
          headers: JSON.parse(String(rest[1])) as Record<string, string>,
          body: String(rest[2]),
        },
      };
    case 'in_progress':
      return { kind, retryAfterMs: Number(rest[0]) };
    case 'conflict':
    case 'stale':
      return { kind };
    default:
      throw new Error(`unexpected reply from the idempotency script: ${JSON.stringify(reply)}`);
  }
}
