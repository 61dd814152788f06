/**
 * Idempotency for the two POSTs (contract §5): one atomic claim per account and key, replay of the
 * stored definitive response, conflict on another body or endpoint, Profile A's 410 after the
 * window, and reconciliation when an earlier attempt's outcome is unknown.
 */
import { createHash } from 'node:crypto';
import { BackendError } from '../backend/backend.js';
import type { GatewayConfig } from '../config.js';
import { ApiError } from '../errors.js';
import type { BeginRequest, IdempotencyStore, StoredResponse } from '../stores/types.js';
import { StoreUnavailableError } from '../stores/types.js';

const KEY_PATTERN = /^[A-Za-z0-9_.-]{1,80}$/;

export function readIdempotencyKey(header: string | string[] | undefined): string {
  if (header === undefined) {
    throw new ApiError('idempotency_key_missing', 'This endpoint requires an Idempotency-Key header.');
  }
  if (Array.isArray(header) || !KEY_PATTERN.test(header)) {
    throw new ApiError('idempotency_key_invalid', 'Idempotency-Key must be 1 to 80 characters of A-Z a-z 0-9 _ . -');
  }
  return header;
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

export interface IdempotentRun {
  accountId: string;
  key: string;
  method: string;
  route: string;
  params: unknown;
  body: unknown;
  /** Runs the endpoint; `reconcile` asks it to find out first what an earlier attempt did. */
  execute(reconcile: boolean): Promise<StoredResponse>;
  /** Renders an error the way the client would see it, for storing definitive 4xx answers. */
  render(error: ApiError): StoredResponse;
}

/**
 * The backend's definitive refusals, stored and replayed (contract §5). A validation failure is not
 * among them: it is a rejection before anything was executed, which the client may fix and retry
 * with the same key.
 */
function isDefinitiveBackendAnswer(error: unknown): boolean {
  return error instanceof BackendError && (error.kind === 'not_found' || error.kind === 'conflict');
}

/** True when the backend can have acted: such an attempt must be reconciled, never blindly re-run. */
function mayHaveExecuted(error: unknown): boolean {
  if (error instanceof BackendError) return error.outcomeUnknown;
  if (error instanceof ApiError) return error.status >= 500;
  return true;
}

export class Idempotency {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly config: Pick<GatewayConfig, 'profile' | 'idempotency'>,
    /** The longest a backend write may take; the claim's lease is a little longer. */
    private readonly writeTimeoutMs: number,
  ) {}

  private windows(): Pick<BeginRequest, 'leaseMs' | 'retentionMs' | 'staleAfterMs'> {
    const settings = this.config.idempotency;
    const leaseMs = this.writeTimeoutMs + settings.leaseMarginMs;
    return this.config.profile === 'A'
      ? { leaseMs, retentionMs: settings.staleRetentionMs, staleAfterMs: settings.replayWindowMs }
      : { leaseMs, retentionMs: settings.profileBWindowMs, staleAfterMs: null };
  }

  async run(
    run: IdempotentRun,
    toApiError: (error: unknown) => ApiError,
    log: { error(obj: object, msg: string): void },
  ): Promise<IdempotentOutcome> {
    const settle = async (operation: () => Promise<void>): Promise<void> => {
      // Recording the outcome must not turn a done request into an error: the client gets its
      // answer; a record left behind expires with its lease and the next attempt reconciles.
      try {
        await operation();
      } catch (error) {
        log.error({ err: (error as Error).message }, 'could not record the idempotency outcome');
      }
    };
    const scope = { accountId: run.accountId, key: run.key };
    const claim = await this.guard(() =>
      this.store.begin({
        ...scope,
        fingerprint: fingerprint(run.method, run.route, run.params, run.body),
        endpoint: `${run.method} ${run.route}`,
        ...this.windows(),
      }),
    );
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
      case 'in_progress': {
        const retryAfter = String(Math.max(1, Math.ceil(claim.retryAfterMs / 1000)));
        throw new ApiError('idempotency_in_progress', 'A request with this Idempotency-Key is still being processed.', {
          headers: { 'retry-after': retryAfter },
        });
      }
      case 'acquired':
        break;
    }

    let response: StoredResponse;
    try {
      response = await run.execute(claim.reconcile);
    } catch (error) {
      if (isDefinitiveBackendAnswer(error)) {
        const rendered = run.render(toApiError(error));
        await settle(() => this.store.complete(scope, claim.token, rendered));
      } else if (mayHaveExecuted(error)) {
        await settle(() => this.store.markUnknown(scope, claim.token));
      } else {
        await settle(() => this.store.release(scope, claim.token));
      }
      throw error;
    }
    await settle(() => this.store.complete(scope, claim.token, response));
    return { response, replayed: false };
  }

  private async guard<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      if (error instanceof StoreUnavailableError) {
        throw new ApiError('store_unavailable', 'The idempotency store is unavailable; the request was not executed.', {
          headers: { 'retry-after': '1' },
          cause: error,
        });
      }
      throw error;
    }
  }
}
