/**
 * Injected failures, as for the WHMCS simulator. Latency faults add up; of the others, the first
 * that matches decides how the call ends. Each applies to `times` calls (default: every call).
 */
interface FaultScope {
  /** Admin method such as `order/create`; absent or `all` for every method. */
  method?: string;
  times?: number;
}

export type OutcomeFault =
  /** HTTP 500 with an HTML body; not performed. */
  | { kind: 'http500' }
  /** HTTP 200 with an HTML page instead of JSON; not performed. */
  | { kind: 'html' }
  /** Performed, then the answer is cut off halfway. */
  | { kind: 'malformed' }
  /** FOSSBilling's rate limiter: error 429, HTTP 429, `Retry-After`; not performed. */
  | { kind: 'rate_limited'; retryAfterSeconds?: number }
  /** The socket is destroyed before anything happens; not performed. */
  | { kind: 'reset' }
  /** Performed, then the answer waits `ms`. */
  | { kind: 'stall_after_effect'; ms: number }
  /** Performed, then an error envelope (code 9999): createOrder failing in its hooks or invoice with the order stored. */
  | { kind: 'error_after_effect' }
  /** No answer ever; not performed. */
  | { kind: 'hang' };

export type FossbillingFault = FaultScope & ({ kind: 'latency'; ms: number } | OutcomeFault);

interface Armed {
  fault: FossbillingFault;
  remaining: number;
}

export class FaultPlan {
  private armed: Armed[] = [];

  inject(fault: FossbillingFault): void {
    if ((fault.kind === 'latency' || fault.kind === 'stall_after_effect') && (!Number.isFinite(fault.ms) || fault.ms < 0)) {
      throw new RangeError(`fault ${fault.kind}: ms must be a non-negative number`);
    }
    this.armed.push({ fault, remaining: fault.times ?? Infinity });
  }

  clear(): void {
    this.armed = [];
  }

  takeFor(method: string): { delayMs: number; outcome: OutcomeFault | undefined } {
    let delayMs = 0;
    let outcome: OutcomeFault | undefined;
    for (const entry of this.armed) {
      const scope = entry.fault.method;
      if (entry.remaining <= 0 || (scope !== undefined && scope !== 'all' && scope !== method)) continue;
      if (entry.fault.kind === 'latency') delayMs += entry.fault.ms;
      else if (outcome === undefined) outcome = entry.fault;
      else continue;
      entry.remaining -= 1;
    }
    this.armed = this.armed.filter((entry) => entry.remaining > 0);
    return { delayMs, outcome };
  }
}
