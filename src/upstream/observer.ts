/** What an upstream client (and the v1 passthrough's forwarder) tells the gateway's metrics as it works. */
import type { BackendError } from '../backend/backend.js';
import type { CircuitState } from './breaker.js';

/**
 * How a call ended, as counted: `success`, `circuit_open`, `queue_full` or `credential_hold` (refused,
 * nothing sent), or the BackendError kind.
 */
export type UpstreamOutcome = 'success' | 'circuit_open' | 'queue_full' | 'credential_hold' | BackendError['kind'];

/**
 * What the client reports as it works (the gateway's metrics implement it; src/upstream stays free
 * of any metrics library). Action names come from the mapping's closed action table.
 */
export interface UpstreamObserver {
  /** One call through the breaker ended; `seconds` from admission to the end (retry included). */
  called(action: string, outcome: UpstreamOutcome, seconds: number): void;
  /** A read declared cacheable was served fresh, stale (while one refresh runs) or not at all. */
  cacheLookup(action: string, result: 'hit' | 'stale' | 'miss'): void;
  /** A read joined an identical call already in flight instead of sending its own. */
  coalesced(action: string): void;
  breakerState(state: CircuitState): void;
}

/**
 * The other processes of a cluster (WORKERS), which reach the upstream from the same address: a
 * failed login one of them met counts towards the upstream's ban of them all (credential-hold.ts).
 */
export interface FailedLoginPeers {
  /** This process met a failed login at the upstream named `label`. */
  tell(label: string): void;
  /** `hear` is called with the label of each failed login another process met. */
  listen(hear: (label: string) => void): void;
}

/** What the gateway hooks into every client it builds (metrics; a cluster worker's peers). */
export interface UpstreamHooks {
  observer?: UpstreamObserver | undefined;
  failedLoginPeers?: FailedLoginPeers | undefined;
}
