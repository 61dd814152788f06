/**
 * What the upstream client (client.ts) is given and gives: a mapping's protocol, the options it is
 * wired with, the context of one call, and the client itself.
 */
import type { Dispatcher } from 'undici';
import type { BackendLogger } from '../backend/logger.js';
import type { TraceContext } from '../ops/trace.js';
import type { Redact } from './answers.js';
import type { CircuitBreakerConfig } from './breaker.js';
import type { CredentialHold, LoginBan } from './credential-hold.js';
import type { Exchange } from './exchange.js';
import type { UpstreamHooks } from './observer.js';
import type { ActionTable, Freshness, UpstreamAction } from './policy.js';

export interface UpstreamRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface UpstreamProtocol<Id extends string, Params, Answer> {
  /** Names the upstream in log lines and operator messages: `WHMCS`, `FOSSBilling`. */
  readonly label: string;
  readonly actions: ActionTable<Id>;
  /** A cheap read that shows the upstream answers: sent before a write when the breaker is half-open. */
  readonly probe: Id;
  readonly probeParams: Params;
  request(action: UpstreamAction<Id>, params: Params): UpstreamRequest;
  /** Identifies identical calls, for coalescing and caching. */
  callKey(action: UpstreamAction<Id>, params: Params): string;
  /** Returns the answer, or throws a BackendError by the protocol's own rules (status, envelope). */
  read(action: UpstreamAction<Id>, exchange: Exchange): Answer;
  readonly redact: Redact;
  /** The upstream bans the gateway's address after failed logins: the credential hold stays clear of it. */
  readonly loginBan?: LoginBan;
}

/**
 * What a call is made for: the W3C trace of the request being served, sent as its headers and
 * named (`trace_id`) in the lines logged about the call (background calls have none), and how
 * current its answer must be.
 */
export interface UpstreamCallContext {
  trace?: TraceContext | undefined;
  /** `cached` when not given. */
  freshness?: Freshness | undefined;
  /**
   * false: refused at once (UpstreamBusyError, nothing sent) when every connection is in use and the
   * breaker is closed, rather than queued behind the calls on them. For a health ping: a pool busy
   * with calls is not an upstream that is down (the breaker tells that), and a ping waiting behind
   * them would say it is. With the breaker open the ping goes to it (refused: down).
   */
  waitForConnection?: boolean | undefined;
  /**
   * The request's deadline (epoch ms, request-deadline.ts): the call's own shortened to it, and not
   * sent with too little of it left; a read shared with other requests is waited for until then.
   */
  deadline?: number | undefined;
}

/** `context` asking for `freshness`; itself when none is asked (no object made on the usual path). */
export function withFreshness(context: UpstreamCallContext | undefined, freshness: Freshness | undefined): UpstreamCallContext | undefined {
  return freshness === undefined ? context : { ...context, freshness };
}

export interface UpstreamClientOptions extends UpstreamHooks {
  /** Scheme, host and port of the upstream. */
  origin: string;
  connections: number;
  connectTimeoutMs: number;
  maxResponseBytes: number;
  circuitBreaker: CircuitBreakerConfig;
  /** Replaces the client's own Pool (tests pass an undici MockAgent); the caller closes it. */
  dispatcher?: Dispatcher | undefined;
  logger?: BackendLogger | undefined;
  /** The clock of the circuit breaker and the answer cache, monotonic ms (tests inject one); call deadlines always use real time. */
  now?: (() => number) | undefined;
  /** Another client's, of the same upstream and credentials (the in-gateway doctor's): one count of failed logins for both. */
  credentialHold?: CredentialHold | undefined;
}

export interface UpstreamClient<Id extends string, Params, Answer> {
  readonly actions: ActionTable<Id>;
  /** A coalesced or cached read is sent once, with the context of the call that sent it; `context.freshness` says which answer will do. */
  call(id: Id, params: Params, context?: UpstreamCallContext): Promise<Answer>;
  /**
   * The mapping found `answer` unusable (an unexpected shape): when it is the one cached for the
   * call, it is dropped, so that the next read asks the upstream again instead of failing the same
   * way until the TTL runs out.
   */
  reject(id: Id, params: Params, answer: Answer): void;
  /** Its hold after a refusal of the credentials, for another client to share (UpstreamClientOptions). */
  readonly credentialHold: CredentialHold;
  close(): Promise<void>;
}
