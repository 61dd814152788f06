/**
 * Idempotency for the two POSTs (contract §5): one atomic claim per account and key, replay of the
 * stored definitive response, conflict on another body or endpoint, Profile A's 410 after the
 * window, and reconciliation when an earlier attempt's outcome is unknown.
 *
 * A write whose outcome cannot be observed is announced in the store before it is sent
 * (write-ahead). From then on the record never counts as "not executed": a retry waits for the
 * settle time, then reconciles, and the handler may send again only with proof of absence.
 */
import { createHash } from 'node:crypto';
import { BackendError } from '../backend/backend.js';
import type { GatewayConfig } from '../config.js';
import { ConfigError } from '../config.js';
import { ApiError } from '../errors.js';
import type { IdempotencyObserver, IdempotencyOutcome } from '../ops/observers.js';
import type { BeginRequest, BeginResult, IdempotencyStore, StoredResponse } from '../stores/types.js';
import { StoreUnavailableError } from '../stores/types.js';

/**
 * The key as sent, or as the IETF draft sends it: a structured-field string, quoted
 * (`"8e03978e-40d5"`, draft-ietf-httpapi-idempotency-key-header §2). The quotes are not part of the
 * key, so both forms name the same one; no escape can occur in the key's alphabet.
 */
const KEY_PATTERN = /^(?:([A-Za-z0-9_.-]{1,80})|"([A-Za-z0-9_.-]{1,80})")$/;

export function readIdempotencyKey(header: string | string[] | undefined): string {
  if (header === undefined) {
    throw new ApiError('idempotency_key_missing', 'This endpoint requires an Idempotency-Key header.');
  }
  const match = Array.isArray(header) ? null : KEY_PATTERN.exec(header);
  if (match === null) {
    throw new ApiError('idempotency_key_invalid', 'Idempotency-Key must be 1 to 80 characters of A-Z a-z 0-9 _ . -, quoted or not');
  }
  return (match[1] ?? match[2]) as string;
}

/** JSON with object keys sorted at every level, so key order and white space do not matter. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function fingerprint(method: string, route: string, params: unknown, body: unknown): string {
  return createHash('sha256').update(canonicalJson([method, route, params ?? {}, body ?? null])).digest('hex');
}

export interface IdempotentOutcome {
  response: StoredResponse;
  replayed: boolean;
}

/** What the handler of an idempotent endpoint gets for its attempt. */
export interface IdempotentAttempt {
  /** Names this use of the key; kept across its retries, new when the key is reused after expiry. */
  recordId: string;
  /** True when an earlier attempt sent a write: find out what it did before acting. */
  reconcile: boolean;
  /** Write-ahead: call right before a write is sent; when it throws, send nothing. */
  beforeWrite(): Promise<void>;
  /** The refusal when the earlier attempt's outcome cannot be proven; logs `reason` for the operator. */
  outcomeUnknown(reason: string): ApiError;
}

/** For handlers of idempotent endpoints, which always run under an attempt. */
export function requireAttempt(attempt: IdempotentAttempt | undefined): IdempotentAttempt {
  if (!attempt) throw new Error('an idempotent endpoint ran without its idempotency attempt');
  return attempt;
}

export interface IdempotentRun {
  accountId: string;
  key: string;
  method: string;
  route: string;
  params: unknown;
  body: unknown;
  /** Runs the endpoint for this attempt. */
  execute(attempt: IdempotentAttempt): Promise<StoredResponse>;
  /** Renders an error the way the client would see it, for storing definitive 4xx answers. */
  render(error: ApiError): StoredResponse;
}

interface Log {
  error(obj: object, msg: string): void;
}

/**
 * The backend's definitive refusals, stored and replayed (contract §5: the 4xx the backend decided).
 * The sent write's own refusal is, whatever its kind: the backend decided and did nothing. Before the
 * write, a validation failure is not: it is a check of the request against what the backend shows
 * (the catalog), made before anything was executed, which the client may fix and retry with the
 * same key. Any other refusal met after a write was sent is not definitive: the write may stand.
 */
function isDefinitiveBackendAnswer(error: unknown, writeAnswered: boolean): boolean {
  if (isUpstreamRefusal(error)) return writeAnswered;
  if (!(error instanceof BackendError) || error.outcomeUnknown) return false;
  return error.kind === 'not_found' || error.kind === 'conflict' || (writeAnswered && error.kind === 'validation');
}

/**
 * A v1 upstream's own 400 or 422, passed on as it is (mappings/v1/answer.ts). Sent, it is the write's
 * own refusal like a BackendError's: decided upstream, nothing done.
 */
function isUpstreamRefusal(error: unknown): boolean {
  return error instanceof ApiError && (error.reason === 'invalid_request' || error.reason === 'invalid_action' || error.reason === 'validation_failed');
}

/** True when the backend can have acted: such an attempt must be reconciled, never blindly re-run. */
function mayHaveExecuted(error: unknown): boolean {
  if (error instanceof BackendError) return error.outcomeUnknown;
  if (error instanceof ApiError) return error.status >= 500;
  return true;
}

/**
 * The write did not run: not sent (refused connection, open circuit breaker), turned away by an
 * upstream that said it is unavailable, or refused at its door (`notRun`: the gateway's credentials
 * or what it forwarded). `unavailable` with an unknown outcome (a v1 upstream's 503 to a write) may
 * have run.
 */
function neverRan(error: unknown): boolean {
  return error instanceof BackendError && (error.notRun || (error.kind === 'unavailable' && !error.outcomeUnknown));
}

const seconds = (ms: number): string => String(Math.max(1, Math.ceil(ms / 1000)));

/** `outcome_unknown`: an earlier attempt sent its write and left no outcome; this one reconciles first. */
function claimOutcome(claim: BeginResult): IdempotencyOutcome {
  if (claim.kind === 'replay') return 'replayed';
  if (claim.kind === 'acquired') return claim.sentAt !== null ? 'outcome_unknown' : 'new';
  return claim.kind;
}

export class Idempotency {
  private readonly leaseMs: number;
  readonly settleMs: number;

  constructor(
    private readonly store: IdempotencyStore,
    private readonly config: Pick<GatewayConfig, 'profile' | 'idempotency'> & Partial<Pick<GatewayConfig, 'requestDeadlineMs'>>,
    /** The longest a backend write may take; the claim's lease is a little longer (see leaseMs). */
    writeTimeoutMs: number,
    /** Hears each claim's outcome and store errors (metrics). */
    private readonly observer?: IdempotencyObserver,
  ) {
    const settings = config.idempotency;
    // No request works past its deadline: a holder gone before its mark (a crash) frees the key by
    // then. A marked write settles for the write timeout: the upstream may still be working on it.
    this.leaseMs = Math.min(writeTimeoutMs, config.requestDeadlineMs ?? writeTimeoutMs) + settings.leaseMarginMs;
    if (settings.settleMs !== undefined && settings.settleMs < writeTimeoutMs) {
      throw new ConfigError(
        `invalid configuration:\n  - idempotency.settleMs: must not be shorter than the backend's write timeout (${writeTimeoutMs} ms; it is ${settings.settleMs})`,
      );
    }
    this.settleMs = settings.settleMs ?? writeTimeoutMs + settings.leaseMarginMs;
  }

  private windows(): Pick<BeginRequest, 'leaseMs' | 'retentionMs' | 'staleAfterMs' | 'settleMs'> {
    const settings = this.config.idempotency;
    const common = { leaseMs: this.leaseMs, settleMs: this.settleMs };
    return this.config.profile === 'A'
      ? { ...common, retentionMs: settings.staleRetentionMs, staleAfterMs: settings.replayWindowMs }
      : { ...common, retentionMs: settings.profileBWindowMs, staleAfterMs: null };
  }

  async run(run: IdempotentRun, toApiError: (error: unknown) => ApiError, log: Log): Promise<IdempotentOutcome> {
    const scope = { accountId: run.accountId, key: run.key };
    const claim = await this.guard(() =>
      this.store.begin({
        ...scope,
        fingerprint: fingerprint(run.method, run.route, run.params, run.body),
        endpoint: `${run.method} ${run.route}`,
        ...this.windows(),
      }),
    );
    this.observer?.idempotency(claimOutcome(claim));
    switch (claim.kind) {
      case 'replay':
        return { response: claim.response, replayed: true };
      case 'conflict':
        throw new ApiError(
          'idempotency_conflict',
          'This Idempotency-Key was already used with another request body or endpoint; use a new key.',
        );
      case 'stale':
        throw new ApiError('replay_stale', 'This Idempotency-Key is older than the replay window; use a new key.');
      case 'in_progress':
        throw new ApiError('idempotency_in_progress', 'A request with this Idempotency-Key is still being processed.', {
          headers: { 'retry-after': seconds(claim.retryAfterMs) },
        });
      case 'acquired':
        break;
    }

    const record = (operation: () => Promise<unknown>) => this.record(operation, log);
    let sent = false;
    /** This attempt's write-ahead mark failed: nothing was sent under it. */
    let markFailed = false;
    const attempt: IdempotentAttempt = {
      recordId: claim.recordId,
      reconcile: claim.sentAt !== null,
      beforeWrite: async () => {
        let held: boolean;
        try {
          held = await this.guard(() => this.store.markSent(scope, claim.token, this.leaseMs));
        } catch (error) {
          // The mark may stand where it failed (on the primary alone, or with its reply lost). Its
          // write is not sent, so it is taken back: left, every retry would have to reconcile.
          if (!sent) {
            markFailed = true;
            await record(() => this.store.unmarkSent(scope, claim.token));
          }
          throw error;
        }
        if (!held) {
          throw new ApiError('idempotency_in_progress', 'Another request with this Idempotency-Key took over; nothing was sent.', {
            headers: { 'retry-after': '1' },
          });
        }
        sent = true;
      },
      outcomeUnknown: (reason) => {
        log.error({ account_id: run.accountId, idempotencyKey: run.key, recordId: claim.recordId, reason }, 'outcome of an earlier attempt cannot be proven; nothing sent');
        return this.outcomeUnknown();
      },
    };

    let response: StoredResponse;
    try {
      response = await run.execute(attempt);
    } catch (error) {
      // The sent write's own answer: a refusal, not an unknown outcome.
      const writeAnswered = sent && ((error instanceof BackendError && !error.outcomeUnknown) || isUpstreamRefusal(error));
      const writeSent = sent || claim.sentAt !== null;
      // A refusal is definitive when nothing was sent before it, or when the sent write itself answered it.
      if (isDefinitiveBackendAnswer(error, writeAnswered) && (writeAnswered || claim.sentAt === null)) {
        const rendered = run.render(toApiError(error));
        await record(() => this.store.complete(scope, claim.token, rendered));
        throw error;
      }
      if (sent && neverRan(error)) {
        // Marked, then turned away before it could run (a refused connection, the open breaker, the
        // upstream saying it is unavailable): nothing to reconcile. This attempt's mark is taken
        // back (an earlier attempt's stays), and the client's retry runs the key again.
        await record(() => this.store.unmarkSent(scope, claim.token));
        await record(() => this.store.release(scope, claim.token));
        throw error;
      }
      if (writeSent && !writeAnswered && error instanceof BackendError && toApiError(error).status < 500) {
        // A definitive-looking answer after a write was sent: the write may stand, so the
        // outcome stays unknown rather than pushing the client to a new key.
        await record(() => this.store.markUnknown(scope, claim.token));
        throw attempt.outcomeUnknown(`after a sent write: ${describe(error)}`);
      }
      if (sent || (!markFailed && mayHaveExecuted(error))) await record(() => this.store.markUnknown(scope, claim.token));
      else await record(() => this.store.release(scope, claim.token));
      throw error;
    }
    await record(() => this.store.complete(scope, claim.token, response));
    return { response, replayed: false };
  }

  /** 503 outcome_unknown, with the time until a retry could find proof. */
  private outcomeUnknown(): ApiError {
    return new ApiError(
      'outcome_unknown',
      'An earlier attempt with this Idempotency-Key may have taken effect and its outcome cannot be checked now; nothing was sent. Retry later with the same key.',
      { headers: { 'retry-after': seconds(this.settleMs) } },
    );
  }

  /**
   * Recording the outcome must not turn a done request into an error: the client gets its answer;
   * a record left behind expires with its lease and the next attempt reconciles.
   */
  private async record(operation: () => Promise<unknown>, log: Log): Promise<void> {
    try {
      await operation();
    } catch (error) {
      if (error instanceof StoreUnavailableError) this.observer?.storeError('idempotency');
      log.error({ err: (error as Error).message }, 'could not record the idempotency outcome');
    }
  }

  private async guard<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      if (error instanceof StoreUnavailableError) {
        this.observer?.storeError('idempotency');
        throw new ApiError('store_unavailable', 'The idempotency store is unavailable; the request was not executed.', {
          headers: { 'retry-after': '1' },
          cause: error,
        });
      }
      throw error;
    }
  }
}

/** What went wrong, for the operator's log line (BackendError operator messages carry no secrets). */
function describe(error: unknown): string {
  if (error instanceof BackendError) return `${error.kind}: ${error.operatorMessage ?? error.detail}`;
  if (error instanceof ApiError) return `${error.reason}: ${error.detail}`;
  return error instanceof Error ? error.message : String(error);
}
