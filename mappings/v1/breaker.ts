/**
 * The passthrough's circuit breaker: the shared one (src/upstream/breaker.ts), told about each
 * forwarded exchange by rules like the shared client's (src/upstream/client.ts): the upstream
 * unreachable, not answering in time, the connection breaking, or a 502/503/504 are
 * down-signals; every other answer (a success, a 4xx problem, a 500, a body too large) is an answer.
 * So is a 502 the upstream wrote itself, a Problem+JSON document (`upstream_error`): it is up and
 * speaks of one exchange with its own backend (a record it could not read), which must not stop
 * every account's requests; and a 503 of its own about one write or one feature (`outcome_unknown`,
 * `backend_misconfigured`). A 502 page of a proxy in front of it says the upstream is not there.
 * A forward cut by the request's own deadline says nothing unless it had waited SLOW_CUT_MS for its
 * answer (forwarder.ts): a trial so cut is `abandoned`, and the next forward is the trial.
 */
import { BackendError } from '../../src/backend/backend.js';
import type { BackendLogger } from '../../src/backend/logger.js';
import { DETAIL } from '../../src/upstream/answers.js';
import { type BreakerTicket, type CircuitBreakerConfig, CircuitOpenError, createCircuitBreaker } from '../../src/upstream/breaker.js';
import type { UpstreamObserver } from '../../src/upstream/observer.js';
import { tracedReports } from '../../src/upstream/traced-reports.js';
import type { TraceContext } from '../../src/ops/trace.js';
import type { CaptureFailureKind } from './capture.js';

/**
 * Statuses that say the upstream is down or overloaded. Not 429, unlike the mapped backends' one
 * credential: here each account has its own upstream key, and one account past its key's limit
 * must not open the breaker for every account.
 */
const DOWN_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

/** Capture failures that say the upstream is down; a body too large or an invalid status is an answer. */
const DOWN_FAILURES: ReadonlySet<CaptureFailureKind> = new Set<CaptureFailureKind>(['unreachable', 'timeout', 'broken']);

export interface PassthroughBreaker {
  /**
   * Lets a forward through, or throws CircuitOpenError (nothing sent; counted as `circuit_open`).
   * Call it before the write-ahead mark, so that a refused write stays known as not run.
   */
  admit(action: string, write: boolean, trace: TraceContext | undefined): Promise<BreakerTicket>;
  /** The upstream answered `status` to `action`; `problem`: a 5xx it wrote about that exchange alone (answer.ts, isOwnAnswer). */
  answered(ticket: BreakerTicket, action: string, status: number, problem: boolean, trace: TraceContext | undefined): void;
  /** No answer could be read: `kind` says why, `error` is what the client gets. */
  lost(ticket: BreakerTicket, kind: CaptureFailureKind, error: BackendError, trace: TraceContext | undefined): void;
  /** Cut by the request's own deadline: nothing is counted, and a trial leaves the trial to the next forward. */
  abandoned(ticket: BreakerTicket, trace: TraceContext | undefined): void;
  /** The health probe through the breaker: false at once while it is open, nothing sent. */
  ping(): Promise<boolean>;
  /** Closed: forwards go through (not open, no trial under way). */
  isClosed(): boolean;
}

export function createPassthroughBreaker(
  config: CircuitBreakerConfig,
  deps: {
    logger: BackendLogger;
    observer?: UpstreamObserver | undefined;
    /** GET /v1/health upstream: resolves with its status, rejects when no answer came. */
    probe: () => Promise<number>;
  },
): PassthroughBreaker {
  const { observer, probe } = deps;
  const { logger, report } = tracedReports(deps.logger);
  const breaker = createCircuitBreaker(config, {
    label: 'v1 upstream',
    logger,
    onStateChange: observer?.breakerState.bind(observer),
  });

  function down(action: string, status: number): BackendError {
    return new BackendError('unavailable', DETAIL.unreachable, { operatorMessage: `v1 upstream ${action}: answered ${status}` });
  }

  function heard(ticket: BreakerTicket, action: string, status: number, problem: boolean, trace: TraceContext | undefined): void {
    report(trace, () => {
      if (!DOWN_STATUSES.has(status) || problem) breaker.answered(ticket);
      else breaker.failed(ticket, down(action, status));
    });
  }

  /** The health probe as the breaker's call; `trace`: the request waiting on it, if one is. */
  async function ping(ticket: BreakerTicket, trace: TraceContext | undefined): Promise<boolean> {
    let status: number;
    try {
      status = await probe();
    } catch (error) {
      const failure = new BackendError('unavailable', DETAIL.unreachable, { operatorMessage: `v1 upstream health: ${(error as Error).message}` });
      report(trace, () => breaker.failed(ticket, failure));
      return false;
    }
    heard(ticket, 'health', status, false, trace);
    return status === 200;
  }

  function take(action: string, trace: TraceContext | undefined): BreakerTicket {
    try {
      return report(trace, () => breaker.admit(action));
    } catch (error) {
      if (error instanceof CircuitOpenError) observer?.called(action, 'circuit_open', 0);
      throw error;
    }
  }

  return {
    async admit(action, write, trace) {
      const ticket = take(action, trace);
      if (!ticket.trial || !write) return ticket;
      // A write is never the trial (as in client.ts): against an upstream that still hangs, it
      // would end with its outcome unknown. The health probe goes first; if it was not answered,
      // this admit throws and the write is never sent.
      await ping(ticket, trace);
      return take(action, trace);
    },
    answered: heard,
    lost(ticket, kind, error, trace) {
      report(trace, () => (DOWN_FAILURES.has(kind) ? breaker.failed(ticket, error) : breaker.answered(ticket)));
    },
    abandoned(ticket, trace) {
      report(trace, () => breaker.abandoned(ticket));
    },
    async ping() {
      let ticket: BreakerTicket;
      try {
        ticket = breaker.admit('health');
      } catch {
        return false;
      }
      return ping(ticket, undefined);
    },
    isClosed: () => breaker.isClosed(),
  };
}
