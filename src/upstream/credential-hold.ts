/**
 * A hold on every call to an upstream after it refused the gateway's credentials. Each such call is
 * a failed login there, and WHMCS bans the address after three of them (Auth.php failedLogin: 15
 * minutes by default), after which even a fixed secret is refused ("IP Banned"). Without a hold,
 * every request of every integrator was one more failed login. A hold cannot undo a wrong secret
 * (fixing it means a restart, which starts without a hold); it keeps the gateway from sending what
 * is refused anyway, and keeps checking, ever less often, in case the upstream's side is fixed (the
 * ban lifted, the credential re-enabled). It is looked at when a call is made and again when a
 * connection takes it (exchange.ts, refuseSend): calls queued behind the refused one stay unsent.
 *
 * Where the upstream bans after a number of failed logins (the protocol's LoginBan), the hold never
 * makes the one that would ban: once the next would, it lasts until the upstream has forgotten them.
 * The processes of a cluster share the address the upstream bans: each tells the others of its
 * failed logins (FailedLoginPeers), which hold and count them as their own.
 */
import { BackendError } from '../backend/backend.js';
import type { BackendLogger } from '../backend/logger.js';
import { DETAIL } from './answers.js';
import type { FailedLoginPeers } from './observer.js';

/** The first hold; each refusal after one doubles it, up to the longest. */
const FIRST_HOLD_MS = 5_000;
const LONGEST_HOLD_MS = 300_000;
/** The Retry-After of a call held while the one call that checks the credentials after a hold is out. */
const CHECKING_MS = 1_000;
/** Past the upstream's own reset, for its clock and ours: a check sent this late is a first failure again. */
const BAN_RESET_MARGIN_MS = 60_000;

/**
 * An upstream's ban of the gateway's address after failed logins: `failures` of them, each within
 * `resetMs` of the one before, ban it (WHMCS: 3, 30 minutes; Auth.php failedLogin).
 */
export interface LoginBan {
  failures: number;
  resetMs: number;
}

/**
 * The upstream refused the gateway's credentials (a protocol throws it from `read`): until the hold
 * it starts is over, calls are refused unsent (CredentialHoldError). Only refusals that every call
 * would meet: one of an action's permission holds nothing.
 */
export class CredentialRefusal extends BackendError {
  /**
   * `failedLogin`: the upstream counted it towards its LoginBan (a wrong secret does; "IP Banned",
   * refused before the credentials are read, does not).
   */
  constructor(
    operatorMessage: string,
    readonly failedLogin = true,
  ) {
    // Refused before the action ran: a write's Idempotency-Key is free, not "outcome unknown".
    super('upstream_error', DETAIL.refused, { operatorMessage, notRun: true });
    this.name = 'CredentialRefusal';
  }
}

/**
 * A call refused unsent during a hold: 503 with Retry-After until the next check. No
 * operatorMessage: the refusal that started the hold was logged once.
 */
export class CredentialHoldError extends BackendError {
  constructor(retryAfterMs: number) {
    super('unavailable', 'The billing system refused the gateway’s credentials; calls to it are paused.', { outcomeUnknown: false, retryAfterMs });
    this.name = 'CredentialHoldError';
  }
}

export interface CredentialHold {
  /**
   * What a call gets while a hold lasts (nothing may be sent meanwhile; its Retry-After the hold
   * left); undefined when none does.
   */
  heldError(): CredentialHoldError | undefined;
  /**
   * Asked when a connection takes `call` (any object the call keeps until it ends): as heldError,
   * and once a hold is over, only one call goes to check the credentials; the others are held until
   * it is answered. Without that, every request waiting as a hold ended was one more failed login.
   */
  sendable(call: object): CredentialHoldError | undefined;
  /** `call` ended, answered or not: if it was the check and nothing came of it, another call may check. */
  ended(call: object): void;
  /**
   * A call met a CredentialRefusal: a hold starts, unless one lasts (calls sent before it come back
   * refused too; each is still a failed login, and may lengthen the hold to stay clear of a ban).
   */
  refused(refusal: CredentialRefusal): void;
  /** How many holds have started: a call takes it before it is sent, and gives it back to `answered`. */
  started(): number;
  /**
   * A call succeeded: the credentials pass; a hold ends, and the next one is the first again. Unless
   * a hold started after the call was made (`startedBefore`, what `started` said then): sent before
   * the refusal (a call in flight when the secret was changed upstream), it says nothing of them now.
   */
  answered(startedBefore: number): void;
}

export function createCredentialHold(label: string, logger: BackendLogger | undefined, now: () => number, ban?: LoginBan, peers?: FailedLoginPeers): CredentialHold {
  /** When the hold ends; 0 when none was started since the last answer. */
  let until = 0;
  /** The call sent to check the credentials once a hold is over, until it ends. */
  let checking: object | undefined;
  let holdsStarted = 0;
  let nextHoldMs = FIRST_HOLD_MS;
  /** The upstream's count of failed logins as it keeps it (successes do not reset it, time does), and the last one's time. */
  let failedLogins = 0;
  let lastFailedLoginAt = 0;

  /** The failed login counted; when the next would ban the address, the time the upstream forgets them (else 0). */
  function countFailedLogin(at: number): number {
    if (!ban) return 0;
    failedLogins = at - lastFailedLoginAt >= ban.resetMs ? 1 : failedLogins + 1;
    lastFailedLoginAt = at;
    return failedLogins >= ban.failures - 1 ? at + ban.resetMs + BAN_RESET_MARGIN_MS : 0;
  }

  /**
   * A refusal met here (`refusal`), or a failed login another process met (none: it logged its own).
   * A hold starts unless one lasts; a failed login that brings the ban within one holds until it is
   * forgotten.
   */
  function refusedWith(refusal: CredentialRefusal | undefined, failedLogin: boolean): void {
    const at = now();
    const banClear = failedLogin ? countFailedLogin(at) : 0;
    if (at < until) {
      // A call already on its way when the hold started: one more failed login, which may bring the ban within one.
      if (banClear > until) holdUntilBanClear(banClear, refusal);
      return;
    }
    const holdMs = nextHoldMs;
    nextHoldMs = Math.min(holdMs * 2, LONGEST_HOLD_MS);
    holdsStarted += 1;
    checking = undefined;
    if (banClear > at + holdMs) return holdUntilBanClear(banClear, refusal);
    until = at + holdMs;
    logger?.error(
      { upstream: refusal?.operatorMessage ?? 'refused in another process of this gateway', hold_ms: holdMs },
      `${label} refused the gateway's credentials; calls to it are held for ${holdMs / 1000} s (fix the credentials or the upstream's ban, then restart or wait)`,
    );
  }

  peers?.listen((heard) => heard === label && refusedWith(undefined, true));

  function heldError(): CredentialHoldError | undefined {
    if (until === 0) return undefined;
    const left = until - now();
    if (left > 0) return new CredentialHoldError(left);
    return checking === undefined ? undefined : new CredentialHoldError(CHECKING_MS);
  }

  return {
    heldError,
    sendable(call) {
      if (checking === call) return undefined;
      const held = heldError();
      // A hold over and no check out: this call is the check.
      if (held === undefined && until !== 0) checking = call;
      return held;
    },
    ended(call) {
      if (checking === call) checking = undefined;
    },
    refused(refusal) {
      if (refusal.failedLogin && ban) peers?.tell(label);
      refusedWith(refusal, refusal.failedLogin);
    },
    started: () => holdsStarted,
    answered(startedBefore) {
      if (until === 0 || startedBefore !== holdsStarted) return;
      until = 0;
      checking = undefined;
      nextHoldMs = FIRST_HOLD_MS;
      const msg = `${label} accepted the gateway's credentials again; calls are no longer held`;
      if (logger?.info) logger.info({}, msg);
      else logger?.warn({}, msg);
    },
  };

  function holdUntilBanClear(clearAt: number, refusal: CredentialRefusal | undefined): void {
    const holdMs = clearAt - now();
    until = clearAt;
    logger?.error(
      { upstream: refusal?.operatorMessage ?? 'refused in another process of this gateway', hold_ms: holdMs, failed_logins: failedLogins },
      `${label} refused the gateway's credentials ${failedLogins} times; one more would ban the gateway's address, so calls to it are held for ${Math.ceil(holdMs / 60_000)} min, until ${label} forgets them (fix the credentials, then restart)`,
    );
  }
}
