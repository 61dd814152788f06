/**
 * The circuit breaker of an upstream client. After `failureThreshold` consecutive signs that the
 * upstream is down or overloaded, every call fails at once, without sending anything, for `openMs`;
 * then one trial call goes through (the others keep failing fast): an answer closes the breaker,
 * another down-signal opens it again for `openMs`. A trial its request's deadline cut before it told
 * anything (`abandoned`) does neither: the next call is the trial.
 *
 * The breaker only keeps the state: the client decides what is a down-signal (see client.ts). No
 * timers: the move to half-open happens when the first call arrives after `openMs`, on the
 * injected clock.
 */
import { BackendError } from '../backend/backend.js';
import type { BackendLogger } from '../backend/logger.js';
import { monotonicNow } from './monotonic.js';

export interface CircuitBreakerConfig {
  enabled: boolean;
  failureThreshold: number;
  openMs: number;
}

export type CircuitState = 'closed' | 'open' | 'half_open';

/** Retry-After hint for callers turned away while the trial call runs (its length is unknown). */
export const TRIAL_RETRY_AFTER_MS = 1_000;

/**
 * A call refused by the open breaker: nothing was sent, so a write's outcome is known (not run).
 * No operatorMessage: the state change was logged once, each refusal would only repeat it.
 */
export class CircuitOpenError extends BackendError {
  constructor(retryAfterMs: number) {
    super('unavailable', 'The billing system is unavailable; calls to it are paused while it recovers.', {
      outcomeUnknown: false,
      retryAfterMs,
    });
    this.name = 'CircuitOpenError';
  }
}

/** What `admit` hands out; its result is reported back with it. */
export interface BreakerTicket {
  /** The one call that decides, in half-open, whether the breaker closes. */
  readonly trial: boolean;
  /** Results of calls admitted before the last state change are ignored. */
  readonly epoch: number;
}

export interface CircuitBreaker {
  /** Lets a call through, or throws CircuitOpenError. `action` is for the logs. */
  admit(action: string): BreakerTicket;
  /** The call got an answer from the upstream (any answer: success, business error, 403, …). */
  answered(ticket: BreakerTicket): void;
  /** The call failed with a sign that the upstream is down or overloaded. */
  failed(ticket: BreakerTicket, error: BackendError): void;
  /** The call was cut by its request's own deadline and says nothing; a trial so cut hands the trial to the next call. */
  abandoned(ticket: BreakerTicket): void;
  /** Closed: calls go through (not open, no trial under way). */
  isClosed(): boolean;
}

const NEVER_OPEN: CircuitBreaker = {
  admit: () => ({ trial: false, epoch: 0 }),
  answered: () => undefined,
  failed: () => undefined,
  abandoned: () => undefined,
  isClosed: () => true,
};

export function createCircuitBreaker(
  config: CircuitBreakerConfig,
  options: {
    /** Names the upstream in log lines, e.g. `WHMCS`. */
    label: string;
    logger?: BackendLogger | undefined;
    now?: (() => number) | undefined;
    /** Hears every state change (metrics). */
    onStateChange?: ((state: CircuitState) => void) | undefined;
  },
): CircuitBreaker {
  if (!config.enabled) return NEVER_OPEN;
  const { failureThreshold, openMs } = config;
  // Monotonic: a wall clock stepped back would keep the breaker open (every call refused) as long.
  const now = options.now ?? monotonicNow;
  const { label, logger, onStateChange } = options;

  let state: CircuitState = 'closed';
  /** Bumped at every state change. */
  let epoch = 0;
  /** Consecutive down-signals; kept while open (a failed trial adds one), reset on an answer. */
  let failures = 0;
  let openUntil = 0;
  /** The action of the trial call in flight (half-open), for the logs. */
  let trialAction = '';
  /** Half-open with the trial in flight: other calls are refused until it tells. */
  let trialUnderWay = false;

  function open(error: BackendError, trial: boolean): void {
    state = 'open';
    epoch += 1;
    onStateChange?.(state);
    openUntil = now() + openMs;
    // operatorMessage is redacted by the client: it never holds a credential.
    logger?.error(
      {
        failures,
        lastFailure: error.kind,
        lastError: error.operatorMessage ?? error.detail,
        openMs,
        ...(trial ? { trialAction } : {}),
      },
      `${label} circuit breaker ${trial ? 're-opened: the trial call failed' : 'opened: calls fail fast'}`,
    );
  }

  function close(): void {
    const line = { action: trialAction, failures };
    state = 'closed';
    epoch += 1;
    failures = 0;
    onStateChange?.(state);
    const msg = `${label} circuit breaker closed: the trial call was answered`;
    if (logger?.info) logger.info(line, msg);
    else logger?.warn(line, msg);
  }

  return {
    isClosed: () => state === 'closed',
    admit(action) {
      if (state === 'closed') return { trial: false, epoch };
      if (state === 'half_open') {
        if (trialUnderWay) throw new CircuitOpenError(TRIAL_RETRY_AFTER_MS);
      } else {
        const wait = openUntil - now();
        if (wait > 0) throw new CircuitOpenError(wait);
        state = 'half_open';
        onStateChange?.(state);
        logger?.warn({ action, failures }, `${label} circuit breaker half-open: one trial call goes through`);
      }
      // A new epoch for each trial: what a cut one might still report is ignored.
      epoch += 1;
      trialAction = action;
      trialUnderWay = true;
      return { trial: true, epoch };
    },

    answered(ticket) {
      if (ticket.epoch !== epoch) return;
      if (ticket.trial) close();
      else if (state === 'closed') failures = 0;
    },

    failed(ticket, error) {
      if (ticket.epoch !== epoch) return;
      if (ticket.trial) {
        failures += 1;
        open(error, true);
        return;
      }
      if (state !== 'closed') return;
      failures += 1;
      if (failures >= failureThreshold) open(error, false);
    },

    abandoned(ticket) {
      if (ticket.epoch !== epoch || !ticket.trial) return;
      trialUnderWay = false;
      logger?.warn({ action: trialAction, failures }, `${label} circuit breaker still half-open: the trial call was cut by its request's deadline; the next call is the trial`);
    },
  };
}
