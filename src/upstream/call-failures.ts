/**
 * What an upstream client makes of a failed call: the BackendError its caller gets (a generic
 * `detail`, the upstream's own words redacted in `operatorMessage`), and what its circuit breaker
 * hears of it: a down-signal, an answer, or nothing (a cut by the request's own deadline, unless the
 * call had waited SLOW_CUT_MS for its answer by then).
 */
import { BackendError } from '../backend/backend.js';
import { DETAIL } from './answers.js';
import { CircuitOpenError } from './breaker.js';
import { CredentialHoldError } from './credential-hold.js';
import type { UpstreamProtocol } from './client.js';
import { type Exchange, type ExchangeFailure, ResponseTooLarge } from './exchange.js';
import type { UpstreamAction } from './policy.js';
import { RequestDeadlineReached, SLOW_CUT_MS } from './request-deadline.js';

/**
 * Statuses that say the upstream is down or overloaded rather than answering: a proxy in front of it
 * with no (or no free) worker, or a rate limiter. A 500 is the application answering (often one
 * action's fatal error), so it does not count.
 */
const OVERLOAD_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

export function createCallFailures<Id extends string, Params, Answer>(protocol: UpstreamProtocol<Id, Params, Answer>) {
  const { label, redact } = protocol;
  /** upstream_error failures that still say the upstream is down (see isDownSignal). */
  const downSignals = new WeakSet<BackendError>();
  /** Timeouts at the request's deadline, before the call's own and SLOW_CUT_MS in: they say nothing of the upstream. */
  const cutShort = new WeakSet<BackendError>();

  function transportError(action: UpstreamAction<Id>, failure: ExchangeFailure): BackendError {
    const operatorMessage = redact(`${label} ${action.name}: ${failure.message}`);
    if (!failure.sent) return new BackendError('unavailable', DETAIL.unreachable, { operatorMessage, cause: failure.reason });
    // Sent: a write may have run. Reads are harmless either way.
    const outcomeUnknown = action.safety === 'write';
    if (failure.timedOut) return new BackendError('timeout', DETAIL.timeout, { operatorMessage, outcomeUnknown, cause: failure.reason });
    if (failure.reason instanceof ResponseTooLarge) {
      return new BackendError('upstream_error', DETAIL.unreadable, { operatorMessage, outcomeUnknown, cause: failure.reason });
    }
    // The connection broke mid-call: the server (or the proxy in front of it) is going down.
    const broken = new BackendError('upstream_error', DETAIL.broken, { operatorMessage, outcomeUnknown, cause: failure.reason });
    downSignals.add(broken);
    return broken;
  }

  return {
    /**
     * The failure of an exchange as thrown; `cut`: the request's deadline set the call's. One that
     * the request's deadline cut is not the upstream's, unless it had waited long for its answer
     * (request-deadline.ts, SLOW_CUT_MS).
     */
    thrown(action: UpstreamAction<Id>, failure: ExchangeFailure, cut: boolean): BackendError {
      // Dropped unsent when a connection took it: a credential hold had started while it waited.
      if (failure.reason instanceof CredentialHoldError) return failure.reason;
      if (!cut || !failure.timedOut) return transportError(action, failure);
      // Still queued for a connection: never sent, and never will be.
      if (!failure.sent) return new RequestDeadlineReached(action.safety === 'write');
      const error = transportError(action, failure);
      if (failure.waitedMs < SLOW_CUT_MS) cutShort.add(error);
      return error;
    },

    /** The protocol's reading of an answer; its error under an overload status is a down-signal. */
    read(action: UpstreamAction<Id>, answer: Exchange): Answer {
      try {
        return protocol.read(action, answer);
      } catch (error) {
        if (error instanceof BackendError && OVERLOAD_STATUSES.has(answer.statusCode)) downSignals.add(error);
        throw error;
      }
    },

    /**
     * Cut by the request's own deadline, sent or not (and sent less than SLOW_CUT_MS before):
     * neither a down-signal nor an answer (one would reset the count of down-signals against an
     * upstream that hangs). A trial so cut is abandoned: the next call is the trial.
     */
    cutByRequest: (error: unknown): boolean => error instanceof RequestDeadlineReached || (error instanceof BackendError && cutShort.has(error)),

    /** Dropped unsent by a credential hold that started while it waited for a connection: nothing to report but the hold. */
    held: (error: unknown): error is CredentialHoldError => error instanceof CredentialHoldError,

    /**
     * What the circuit breaker counts: the upstream unreachable (refused, DNS, connect timeout, no
     * free connection in time), not answering in time, the connection breaking, or a proxy saying
     * it is down or overloaded. Everything else is an answer, even an error: business errors, a 403
     * (a configuration problem, logged for the operator on every call; failing fast would hide
     * nothing and only delay recovery once it is fixed), a 500 (one action's error must not stop
     * all of them), unreadable bodies.
     */
    isDownSignal(error: unknown): error is BackendError {
      if (!(error instanceof BackendError) || error instanceof CircuitOpenError) return false;
      return error.kind === 'unavailable' || error.kind === 'timeout' || downSignals.has(error);
    },
  };
}
