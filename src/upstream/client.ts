/**
 * The backend-neutral upstream client: a mapping declares its actions (policy.ts) and its protocol
 * (how a call becomes an HTTP request, how an answer is read), and gets calls with deadlines, one
 * retry for reads that got no answer (never sent, or sent on a connection that broke before the
 * status line: a kept-alive one the upstream closed just then), coalescing, stale-while-revalidate
 * caching, and a circuit breaker that makes calls fail fast while the upstream is down. Every
 * failure leaves as a BackendError whose `detail` is generic; the upstream's own words go to
 * `operatorMessage`, redacted (call-failures.ts).
 */
import type { Dispatcher } from 'undici';
import { Pool } from './undici.js';
import { BackendError } from '../backend/backend.js';
import { traceHeaders, type TraceContext } from '../ops/trace.js';
import { createAnswerCache } from './answer-cache.js';
import { createCallFailures } from './call-failures.js';
import { type BreakerTicket, CircuitOpenError, createCircuitBreaker } from './breaker.js';
import { monotonicNow } from './monotonic.js';
import { createWaitingBound, UpstreamBusyError } from './busy.js';
import { createCredentialHold, CredentialHoldError, CredentialRefusal } from './credential-hold.js';
import { describeError, ExchangeFailure, type ExchangeRequest, exchange } from './exchange.js';
import type { UpstreamAction } from './policy.js';
import { assertTimeLeft, callDeadline, RequestDeadlineReached, sendByOf, within } from './request-deadline.js';
import { tracedReports, withTrace } from './traced-reports.js';
import type { UpstreamCallContext, UpstreamClient, UpstreamClientOptions, UpstreamProtocol } from './client-types.js';

export type { UpstreamCallContext, UpstreamClient, UpstreamClientOptions, UpstreamProtocol, UpstreamRequest } from './client-types.js';
export { withFreshness } from './client-types.js';

export function createUpstreamClient<Id extends string, Params, Answer>(
  protocol: UpstreamProtocol<Id, Params, Answer>,
  options: UpstreamClientOptions,
): UpstreamClient<Id, Params, Answer> {
  const { label, actions, redact } = protocol;
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher: Dispatcher =
    options.dispatcher ?? new Pool(options.origin, { connections: options.connections, pipelining: 1, connectTimeout: options.connectTimeoutMs });
  const logger = options.logger;
  const { observer } = options;
  const { logger: breakerLogger, report } = tracedReports(logger);
  const breaker = createCircuitBreaker(options.circuitBreaker, {
    label,
    logger: breakerLogger,
    now: options.now,
    onStateChange: observer?.breakerState.bind(observer),
  });
  // The cache knows actions by id; the observer hears the upstream's own action names.
  const answers = createAnswerCache<Answer>(
    options.now ?? monotonicNow,
    observer && {
      cacheLookup: (id, result) => observer.cacheLookup(actions[id as Id].name, result),
      coalesced: (id) => observer.coalesced(actions[id as Id].name),
    },
  );
  /** Calls being sent and not finished (from before the breaker admits them): on a connection, or waiting for one. */
  const bound = createWaitingBound(options.connections);
  const failures = createCallFailures(protocol);
  const hold = options.credentialHold ?? createCredentialHold(label, breakerLogger, options.now ?? monotonicNow, protocol.loginBan, options.failedLoginPeers);

  /** The exchange for one call: the protocol's request, its deadline, and the trace's headers. */
  function exchangeRequest(action: UpstreamAction<Id>, params: Params, trace: TraceContext | undefined, deadline: number, sendBy: number | undefined, call: object): ExchangeRequest {
    const { method, path, headers, body } = protocol.request(action, params);
    return {
      origin: options.origin,
      method,
      path,
      // The protocol's headers win: a trace header never replaces what the upstream needs.
      headers: trace === undefined ? headers : Object.assign(traceHeaders(trace), headers),
      body,
      deadline,
      sendBy,
      // Calls queued for a connection when a refusal started a hold are held too: each sent would be one more failed login.
      refuseSend: () => hold.sendable(call),
      maxResponseBytes: options.maxResponseBytes,
    };
  }

  /**
   * Whether a failed first attempt is sent again. Only a read (declared `retry`), only when no answer
   * had started, sent or not: a read has no effect to repeat, and a connection that breaks before the
   * status line is most often a kept-alive one the upstream (or a proxy) closed as it was reused. An
   * answer that started and then broke (mid-body, too large) or a deadline reached is not retried.
   * Writes never are (declared without `retry`): one that failed after it was sent may have run (an
   * unknown outcome).
   */
  function retriable(action: UpstreamAction<Id>, failure: ExchangeFailure, deadline: number): boolean {
    return action.retry && !failure.answered && !failure.timedOut && !failures.held(failure.reason) && Date.now() < deadline;
  }

  /** One call (with its retry), without the breaker; `requestDeadline` shortens its own; `call` names it to the credential hold. */
  async function attempt(action: UpstreamAction<Id>, params: Params, trace: TraceContext | undefined, requestDeadline: number | undefined, call: object): Promise<Answer> {
    const deadline = callDeadline(action.timeoutMs, requestDeadline);
    // Cut by the request's deadline: not sent at all once too little is left, should it wait that long for a connection.
    const request = exchangeRequest(action, params, trace, deadline, sendByOf(action.timeoutMs, deadline, requestDeadline), call);
    const failed = (failure: ExchangeFailure): BackendError => failures.thrown(action, failure, deadline === requestDeadline);
    try {
      return failures.read(action, await exchange(dispatcher, request));
    } catch (error) {
      if (!(error instanceof ExchangeFailure)) throw error;
      if (!retriable(action, error, request.deadline)) throw failed(error);
      // `sent`: whether it had been written (then on a connection that broke before the status line).
      logger?.warn(
        withTrace({ action: action.name, sent: error.sent, error: redact(error.message) }, trace),
        `${label} read failed before any answer came; retrying once`,
      );
      try {
        return failures.read(action, await exchange(dispatcher, request));
      } catch (second) {
        throw second instanceof ExchangeFailure ? failed(second) : second;
      }
    }
  }

  /** One call admitted by the breaker, its result reported back. */
  async function tracked(ticket: BreakerTicket, action: UpstreamAction<Id>, params: Params, trace: TraceContext | undefined, deadline?: number): Promise<Answer> {
    const started = observer === undefined ? 0 : performance.now();
    const holdsBefore = hold.started();
    // Its identity to the credential hold: the one call that checks the credentials once a hold is over.
    const call = {};
    try {
      const answer = await attempt(action, params, trace, deadline, call);
      report(trace, () => {
        breaker.answered(ticket);
        hold.answered(holdsBefore);
      });
      observer?.called(action.name, 'success', (performance.now() - started) / 1000);
      return answer;
    } catch (error) {
      // Dropped unsent by a hold (its refusal was reported) or cut by the deadline: neither an answer nor a down-signal.
      if (failures.cutByRequest(error) || failures.held(error)) report(trace, () => breaker.abandoned(ticket));
      else report(trace, () => (failures.isDownSignal(error) ? breaker.failed(ticket, error) : breaker.answered(ticket)));
      if (error instanceof CredentialRefusal) report(trace, () => hold.refused(error));
      const outcome = failures.held(error) ? 'credential_hold' : error instanceof BackendError ? error.kind : 'upstream_error';
      observer?.called(action.name, outcome, (performance.now() - started) / 1000);
      throw error;
    } finally {
      hold.ended(call);
    }
  }

  function admit(action: UpstreamAction<Id>, trace: TraceContext | undefined): BreakerTicket {
    try {
      return report(trace, () => breaker.admit(action.name));
    } catch (error) {
      if (error instanceof CircuitOpenError) observer?.called(action.name, 'circuit_open', 0);
      throw error;
    }
  }

  /** Held after the upstream refused the credentials (credential-hold.ts): not sent, counted as held. */
  function assertNotHeld(action: UpstreamAction<Id>): void {
    const held = hold.heldError();
    if (held === undefined) return;
    observer?.called(action.name, 'credential_hold', 0);
    throw held;
  }

  /**
   * One call through the circuit breaker; throws CircuitOpenError (nothing sent) while it is open,
   * and UpstreamBusyError (nothing sent) while the pool's queue is full. The queue is looked at
   * first: a trial ticket the breaker handed out must be used.
   */
  async function send(action: UpstreamAction<Id>, params: Params, trace: TraceContext | undefined, deadline?: number): Promise<Answer> {
    const write = action.safety === 'write';
    // Before the breaker and the queue: refused so, nothing was sent and nothing is counted.
    assertTimeLeft(action.timeoutMs, deadline, write);
    assertNotHeld(action);
    return bound.run(
      async () => {
        let ticket = admit(action, trace);
        if (ticket.trial && write) {
          // A write is never the trial: against an upstream that still hangs, it would end with an
          // unknown outcome. The probe goes first, within the write's deadline; the write follows
          // only if the upstream answered it, and in time.
          await tracked(ticket, actions[protocol.probe], protocol.probeParams, trace, deadline).catch(() => undefined);
          // The probe's refusal of the credentials closed the breaker (an answer) and started a hold.
          assertNotHeld(action);
          assertTimeLeft(action.timeoutMs, deadline, write);
          // Closed again, or re-opened: then this throws, and the write was never sent.
          ticket = admit(action, trace);
          // Still half-open, the probe cut by the deadline (with less than a second left): not the write.
          if (ticket.trial) {
            report(trace, () => breaker.abandoned(ticket));
            throw new RequestDeadlineReached(write);
          }
        }
        // A trial ends at the request's deadline too: its client is answered then (breaker.ts, abandoned).
        return tracked(ticket, action, params, trace, deadline);
      },
      () => observer?.called(action.name, 'queue_full', 0),
    );
  }

  async function write(action: UpstreamAction<Id>, params: Params, trace: TraceContext | undefined, deadline: number | undefined): Promise<Answer> {
    try {
      return await send(action, params, trace, deadline);
    } finally {
      // Whatever the outcome, what was read before may be out of date now.
      answers.written(action.invalidates ?? []);
    }
  }

  function describeFailure(error: unknown): string {
    return error instanceof BackendError ? (error.operatorMessage ?? error.detail) : describeError(error);
  }

  function call(id: Id, params: Params, context?: UpstreamCallContext): Promise<Answer> {
    // Not counted as shed: no request of a client was refused. With the breaker open (or half-open),
    // the calls still on the connections were admitted before it opened: they say nothing of load,
    // and the breaker answers the ping.
    if (context?.waitForConnection === false && breaker.isClosed() && bound.connectionsBusy()) {
      return Promise.reject(new UpstreamBusyError());
    }
    const action = actions[id];
    const trace = context?.trace;
    const deadline = context?.deadline;
    if (action.safety === 'write') return write(action, params, trace, deadline);
    const freshness = context?.freshness ?? 'cached';
    if (freshness === 'uncached') return send(action, params, trace, deadline);
    const key = protocol.callKey(action, params);
    // A load shared with other requests keeps its own deadline; this request waits for it until its own.
    const load = () => send(action, params, trace);
    if (action.cacheTtlMs !== undefined) {
      if (freshness === 'fresh') return within(answers.fresh(id, action.cacheTtlMs, key, load), deadline, action.timeoutMs);
      return within(answers.cached(id, action.cacheTtlMs, key, load, (error) => {
        // While the breaker is open, every stale read would log this: its opening was logged once.
        // A refusal of the full pool, too: it fails at once, so every stale read of a flood would
        // start another (each counted as queue_full). A credential hold's start was logged once.
        if (error instanceof CircuitOpenError || error instanceof UpstreamBusyError || error instanceof CredentialHoldError) return;
        logger?.warn(withTrace({ action: action.name, error: describeFailure(error) }, trace), `${label} refresh failed; serving the cached answer`);
      }), deadline, action.timeoutMs);
    }
    if (action.coalesce) return within(answers.coalesced(id, key, load), deadline, action.timeoutMs);
    return send(action, params, trace, deadline);
  }

  async function close(): Promise<void> {
    answers.clear();
    if (ownsDispatcher) await dispatcher.close();
  }

  function reject(id: Id, params: Params, answer: Answer): void {
    const action = actions[id];
    if (action.cacheTtlMs !== undefined) answers.forget(id, protocol.callKey(action, params), answer);
  }

  return { actions, call, reject, credentialHold: hold, close };
}
