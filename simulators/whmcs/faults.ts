/**
 * Injected failures for tests and benchmarks. Latency faults add up; of the others, the first one
 * that matches decides how the call ends. Each applies to `times` calls (default: every call).
 */
import { normalizeActionName } from './protocol.js';

interface FaultScope {
  /** Action name (any case, e.g. `addorder` or `AddOrder`); absent or `all` for every action. */
  action?: string;
  /** How many matching calls the fault applies to; unlimited when absent. */
  times?: number;
}

export type OutcomeFault =
  /** HTTP 500 with an HTML body; the action is not performed. */
  | { kind: 'http500' }
  /** HTTP 200 with an HTML error page instead of API output; not performed. */
  | { kind: 'html' }
  /** The action IS performed, then its answer is cut off halfway (unparseable). */
  | { kind: 'malformed' }
  /** HTTP 403 with a WHMCS access-control message (default `Invalid IP 203.0.113.7`); not performed. */
  | { kind: 'forbidden'; message?: string }
  /** The socket is destroyed before anything happens; not performed. */
  | { kind: 'reset' }
  /** The action IS performed, then the answer waits `ms` (to test timeouts after the upstream acted). */
  | { kind: 'stall_after_effect'; ms: number }
  /** No answer ever; not performed. */
  | { kind: 'hang' };

export type WhmcsFault = FaultScope & ({ kind: 'latency'; ms: number } | OutcomeFault);

interface ArmedFault {
  fault: WhmcsFault;
  action: string | undefined;
  remaining: number;
}

export interface FaultsForCall {
  delayMs: number;
  outcome: OutcomeFault | undefined;
}

export class FaultPlan {
  private armed: ArmedFault[] = [];

  inject(fault: WhmcsFault): void {
    if (fault.kind === 'latency' || fault.kind === 'stall_after_effect') {
      if (!Number.isFinite(fault.ms) || fault.ms < 0) throw new RangeError(`fault ${fault.kind}: ms must be a non-negative number`);
    }
    const action = fault.action === undefined || fault.action === 'all' ? undefined : normalizeActionName(fault.action);
    this.armed.push({ fault, action, remaining: fault.times ?? Infinity });
  }

  clear(): void {
    this.armed = [];
  }

  /** The faults this call gets; uses up one application of each. */
  takeFor(action: string): FaultsForCall {
    const matching = this.armed.filter((entry) => entry.remaining > 0 && (entry.action === undefined || entry.action === action));
    let delayMs = 0;
    let outcome: OutcomeFault | undefined;
    for (const entry of matching) {
      const { fault } = entry;
      if (fault.kind === 'latency') delayMs += fault.ms;
      else if (outcome === undefined) outcome = fault;
      else continue; // a later outcome fault waits for a call of its own
      entry.remaining -= 1;
    }
    this.armed = this.armed.filter((entry) => entry.remaining > 0);
    return { delayMs, outcome };
  }
}
