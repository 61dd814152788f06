/**
 * The gateway's Prometheus metrics (prom-client), one Registry per app so that tests can build
 * several. Families follow the Prometheus naming rules (`gateway_` prefix, base units, `_total`
 * counters); every label is from a closed set: route templates, never ids, keys or raw URLs.
 * The parts of the gateway see only the observer interfaces (observers.ts, src/upstream/client.ts).
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { CircuitState } from '../upstream/breaker.js';
import { CounterTally, HistogramTally, type CounterCell, type HistogramCell } from './tallies.js';
import type { UpstreamObserver, UpstreamOutcome } from '../upstream/observer.js';
import type { AuditRecord } from '../audit.js';
import type { PolicyName, RateDecision } from '../stores/types.js';
import type { WebhookDisabledReason } from '../stores/webhook-types.js';
import type {
  IdempotencyObserver,
  IdempotencyOutcome,
  OutboxState,
  RateLimitObserver,
  StoreName,
  WebhookDeliveryOutcome,
  WebhookLossReason,
  WebhookObserver,
} from './observers.js';

export const METRIC_PREFIX = 'gateway_';
/** The route label of requests that matched no route (404s of unknown paths). */
export const UNMATCHED_ROUTE = 'unmatched';

/** Seconds; from a cached read (sub-millisecond) to the slowest upstream deadline. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/**
 * Seconds; the gateway's own share of an answer, from a cached read's fraction of a ms to a long
 * stall. 1 and 3 ms are bounds because they are the added-latency goals (p50 and p99): the share
 * of answers within each is read from one bucket, with no interpolation.
 */
const OWN_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const HTTP_LABELS: ('route' | 'method' | 'status')[] = ['route', 'method', 'status'];
const CIRCUIT_STATES: readonly CircuitState[] = ['closed', 'open', 'half_open'];
type CacheLookupResult = Parameters<UpstreamObserver['cacheLookup']>[1];
/** Every value of a closed label set (the record makes the compiler check that none is missing). */
const valuesOf = <V extends string>(all: Record<V, true>): V[] => Object.keys(all) as V[];
const IDEMPOTENCY_OUTCOMES = valuesOf<IdempotencyOutcome>({ new: true, replayed: true, conflict: true, in_progress: true, stale: true, outcome_unknown: true });
const DELIVERY_OUTCOMES = valuesOf<WebhookDeliveryOutcome>({ delivered: true, retrying: true, failed: true, blocked: true, dropped: true });
const LOSS_REASONS = valuesOf<WebhookLossReason>({ held_full: true, stopped: true, backlog_full: true });
const DISABLED_REASONS = valuesOf<WebhookDisabledReason>({ gone: true, failing: true });
const STORES = valuesOf<StoreName>({ rate_limits: true, idempotency: true, keys: true, webhooks: true });
const AUDIT_OUTCOMES = valuesOf<AuditRecord['outcome']>({ returned: true, denied: true, not_found: true, failed: true });

/**
 * `gateway_ops_requests_total`: the ops listener's own requests (probes, scrapes, admin calls, its
 * parser's refusals). A family apart from `gateway_http_requests_total`, which counts the public API
 * only: probes and scrapes mixed in would drown its rates. Few requests: prom-client's counter will do.
 */
export class OpsRequestCounts {
  private readonly requests: Counter<'route' | 'method' | 'status'>;

  constructor(registry: Registry) {
    const help = 'Requests answered on the ops listener (probes, scrapes, admin API), by route template, method and status.';
    this.requests = new Counter({ name: `${METRIC_PREFIX}ops_requests_total`, help, labelNames: HTTP_LABELS, registers: [registry] });
  }

  /** `route`: a route template or UNMATCHED_ROUTE, never a raw URL. */
  count(route: string, method: string, status: number): void {
    this.requests.inc({ route, method, status });
  }
}

export class GatewayMetrics implements RateLimitObserver, IdempotencyObserver, WebhookObserver {
  readonly registry = new Registry();
  /** The ops listener's, when this app's serves it (a cluster's primary counts them in its own registry). */
  readonly opsRequests = new OpsRequestCounts(this.registry);

  // Counted on every request: tallies (tallies.ts), their cells kept in the maps below.
  private readonly httpRequests = new CounterTally(`${METRIC_PREFIX}http_requests_total`, 'HTTP requests answered, by route template, method and status.', HTTP_LABELS, this.registry);
  private readonly httpDuration = new HistogramTally(`${METRIC_PREFIX}http_request_duration_seconds`, 'Time to answer an HTTP request, by route template, method and status.', HTTP_LABELS, LATENCY_BUCKETS, this.registry);
  private readonly httpOwnDuration = new HistogramTally(
    `${METRIC_PREFIX}http_request_own_duration_seconds`,
    "Time to answer an HTTP request minus the time it waited on the backend, its mapping and upstream calls (the gateway's own share), by route template, method and status.",
    HTTP_LABELS,
    OWN_BUCKETS,
    this.registry,
  );
  // Every upstream call counts and times itself; a cached read (the catalog of every /v1/products) counts one lookup.
  private readonly upstreamRequests = new CounterTally(`${METRIC_PREFIX}upstream_requests_total`, 'Upstream calls by backend, action and outcome (success, circuit_open, queue_full, credential_hold or the error kind).', ['backend', 'action', 'outcome'], this.registry);
  private readonly upstreamDuration = new HistogramTally(`${METRIC_PREFIX}upstream_request_duration_seconds`, 'Duration of upstream calls that were sent (retry included), by backend and action.', ['backend', 'action'], LATENCY_BUCKETS, this.registry);
  private readonly cacheLookups = new CounterTally(`${METRIC_PREFIX}upstream_cache_lookups_total`, 'Lookups of cacheable upstream reads: hit (fresh), stale (served while one refresh runs), miss.', ['backend', 'action', 'result'], this.registry);
  private readonly rateLimitDecisionDuration = new HistogramTally(
    `${METRIC_PREFIX}rate_limit_decision_duration_seconds`,
    "Time from asking the rate-limit store for a decision to its answer: a Redis round trip, the part of every request's own share that waits on Redis.",
    [],
    OWN_BUCKETS,
    this.registry,
  );
  private readonly rateLimitDecisionCell = this.rateLimitDecisionDuration.cell({});
  private readonly rateLimitDecisions = new CounterTally(`${METRIC_PREFIX}rate_limit_decisions_total`, 'Rate-limit policy checks, by policy and outcome (allowed, limited).', ['policy', 'outcome'], this.registry);
  private readonly idempotencyRequests = this.counter('idempotency_requests_total', 'Idempotent requests by claim outcome.', ['outcome']);
  private readonly breakerState = this.gauge('upstream_circuit_breaker_state', 'Circuit breaker state per backend: 1 for the current state, 0 for the others.', ['backend', 'state']);
  private readonly breakerTransitions = this.counter('upstream_circuit_breaker_transitions_total', 'Circuit breaker state changes, by backend and new state.', ['backend', 'state']);
  private readonly shedCalls = this.counter('upstream_calls_shed_total', 'Upstream calls refused unsent because as many as the pool may queue already waited for a connection, by backend.', ['backend']);
  private readonly coalescedCalls = this.counter('upstream_coalesced_calls_total', 'Upstream reads that joined an identical call in flight instead of sending their own.', ['backend', 'action']);
  private readonly storeErrors = this.counter('store_errors_total', 'Store calls that failed because the store was unreachable, by store.', ['store']);
  private readonly redisDataLost = this.counter('redis_data_lost_total', 'Times a reconnection found that Redis had lost its data (restarted without persistence, flushed, replaced): API keys, idempotency records and outbox events with it.', []);
  private readonly storeFallbacks = this.counter('store_fallbacks_total', 'Requests served without the store, by store and fallback (memory, stale).', ['store', 'fallback']);
  private readonly auditWrites = this.counter('audit_writes_total', 'Credentials audit records, by audited outcome and write result (written, failed).', ['outcome', 'result']);
  private readonly webhookDeliveries = this.counter('webhook_deliveries_total', 'Webhook delivery attempts by outcome.', ['outcome']);
  private readonly webhookEventsLost = this.counter('webhook_events_lost_total', 'Events lost before reaching the outbox, by reason: the stores refused events of writes longer than they could be held, or the account had the most events waiting.', ['reason']);
  private readonly webhookDisabled = this.counter('webhook_endpoints_disabled_total', 'Webhook endpoints disabled, by reason (gone: answered 410; failing: failed too long).', ['reason']);
  private outboxReader: (() => OutboxState | Promise<OutboxState>) | undefined;
  private outboxRead: Promise<OutboxState | undefined> | undefined;

  /** route → method → status → the request's cells. */
  private readonly httpCells = new Map<string, Map<string, Map<number, { requests: CounterCell; duration: HistogramCell; own: HistogramCell }>>>();
  /** policy → its cells by outcome (several decisions per request). */
  private readonly policyCells = new Map<PolicyName, Record<'allowed' | 'limited', CounterCell>>();

  constructor() {
    // The rare events alerts watch start at 0: a series first seen at 1 has no earlier sample, and
    // increase()/rate() miss that first event (often the only one: an endpoint disabled, an audit write failed).
    for (const outcome of IDEMPOTENCY_OUTCOMES) this.idempotencyRequests.inc({ outcome }, 0);
    for (const outcome of DELIVERY_OUTCOMES) this.webhookDeliveries.inc({ outcome }, 0);
    for (const reason of DISABLED_REASONS) this.webhookDisabled.inc({ reason }, 0);
    for (const reason of LOSS_REASONS) this.webhookEventsLost.inc({ reason }, 0);
    for (const store of STORES) this.storeErrors.inc({ store }, 0);
    this.redisDataLost.inc(0);
    this.storeFallbacks.inc({ store: 'rate_limits', fallback: 'memory' }, 0);
    this.storeFallbacks.inc({ store: 'keys', fallback: 'stale' }, 0);
    for (const outcome of AUDIT_OUTCOMES) for (const result of ['written', 'failed']) this.auditWrites.inc({ outcome, result }, 0);
    // The outbox gauges come from one read per scrape. One that fails (Redis unreachable) leaves
    // the depth and age out of the scrape rather than repeating the last values read: a backlog
    // that cannot be seen must not look healthy. The series go stale (a gap on a graph), and the
    // time of the last read that worked says for how long (an alert on its age needs no absent()).
    this.gauge('webhook_outbox_depth', 'Webhook deliveries waiting in the outbox (absent while it cannot be read).', [], async (gauge) => {
      const state = await this.readOutbox();
      if (state) gauge.set(state.depth);
      else gauge.remove({});
    });
    this.gauge('webhook_outbox_oldest_pending_age_seconds', 'Age of the oldest webhook delivery waiting in the outbox (0 when none waits; absent while it cannot be read).', [], async (gauge) => {
      const state = await this.readOutbox();
      if (state) gauge.set(state.oldestPendingAgeSeconds);
      else gauge.remove({});
    });
    this.gauge('webhook_outbox_last_read_timestamp_seconds', 'Unix time of the last scrape that could read the webhook outbox.', [], async (gauge) => {
      if (await this.readOutbox()) gauge.set(Date.now() / 1000);
    });
  }

  /** Process and Node.js runtime metrics (CPU, memory, event loop lag, GC), for the process that serves. */
  collectRuntimeMetrics(): void {
    collectDefaultMetrics({ register: this.registry, prefix: METRIC_PREFIX });
  }

  // ---- HTTP --------------------------------------------------------------------------------

  httpRequest(route: string, method: string, status: number, seconds: number, ownSeconds: number): void {
    let byMethod = this.httpCells.get(route);
    if (!byMethod) this.httpCells.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let cells = byStatus.get(status);
    if (!cells) {
      const labels = { route, method, status };
      byStatus.set(status, (cells = { requests: this.httpRequests.cell(labels), duration: this.httpDuration.cell(labels), own: this.httpOwnDuration.cell(labels) }));
    }
    cells.requests.value += 1;
    this.httpDuration.observe(cells.duration, seconds);
    this.httpOwnDuration.observe(cells.own, ownSeconds);
  }

  // ---- rate limits, idempotency, stores, audit, webhooks ------------------------------------

  decided(decision: RateDecision, seconds: number): void {
    this.rateLimitDecisionDuration.observe(this.rateLimitDecisionCell, seconds);
    for (const policy of decision.policies) {
      this.policyCell(policy.name, decision.violated.length > 0 && decision.violated.includes(policy.name) ? 'limited' : 'allowed').value += 1;
    }
  }

  private policyCell(policy: PolicyName, outcome: 'allowed' | 'limited'): CounterCell {
    let cells = this.policyCells.get(policy);
    if (!cells) {
      const cell = (each: 'allowed' | 'limited') => this.rateLimitDecisions.cell({ policy, outcome: each });
      this.policyCells.set(policy, (cells = { allowed: cell('allowed'), limited: cell('limited') }));
    }
    return cells[outcome];
  }

  idempotency(outcome: IdempotencyOutcome): void {
    this.idempotencyRequests.inc({ outcome });
  }

  storeError(store: StoreName): void {
    this.storeErrors.inc({ store });
  }

  storeDataLost(): void {
    this.redisDataLost.inc();
  }

  storeFallback(store: StoreName, fallback: 'memory' | 'stale'): void {
    this.storeFallbacks.inc({ store, fallback });
  }

  auditWrite(outcome: AuditRecord['outcome'], written: boolean): void {
    this.auditWrites.inc({ outcome, result: written ? 'written' : 'failed' });
  }

  recordDelivery(outcome: WebhookDeliveryOutcome): void {
    this.webhookDeliveries.inc({ outcome });
  }

  endpointDisabled(reason: WebhookDisabledReason): void {
    this.webhookDisabled.inc({ reason });
  }

  eventLost(reason: WebhookLossReason): void {
    this.webhookEventsLost.inc({ reason });
  }

  observeOutbox(read: () => OutboxState | Promise<OutboxState>): void {
    this.outboxReader = read;
  }

  private readOutbox(): Promise<OutboxState | undefined> {
    const reader = this.outboxReader;
    if (!reader) return Promise.resolve(undefined);
    // The two gauges are collected together: they share the read in flight.
    this.outboxRead ??= Promise.resolve()
      .then(reader)
      .catch(() => undefined)
      .finally(() => (this.outboxRead = undefined));
    return this.outboxRead;
  }

  // ---- upstream ------------------------------------------------------------------------------

  /** The observer for one backend's upstream client (the `backend` label). */
  upstream(backend: string): UpstreamObserver {
    this.setBreakerState(backend, 'closed');
    for (const state of CIRCUIT_STATES) this.breakerTransitions.inc({ backend, state }, 0);
    this.shedCalls.inc({ backend }, 0);
    /** action → its cache lookups' cells by result. */
    const lookupCells = new Map<string, Record<CacheLookupResult, CounterCell>>();
    const lookupCellsOf = (action: string): Record<CacheLookupResult, CounterCell> => {
      let cells = lookupCells.get(action);
      if (!cells) {
        const cell = (result: CacheLookupResult) => this.cacheLookups.cell({ backend, action, result });
        lookupCells.set(action, (cells = { hit: cell('hit'), stale: cell('stale'), miss: cell('miss') }));
      }
      return cells;
    };
    /** action → its calls' cells: one count per outcome, and the duration. */
    const callCells = new Map<string, { requests: Map<UpstreamOutcome, CounterCell>; duration: HistogramCell | undefined }>();
    return {
      called: (action: string, outcome: UpstreamOutcome, seconds: number) => {
        let cells = callCells.get(action);
        if (!cells) callCells.set(action, (cells = { requests: new Map(), duration: undefined }));
        let requests = cells.requests.get(outcome);
        if (!requests) cells.requests.set(outcome, (requests = this.upstreamRequests.cell({ backend, action, outcome })));
        requests.value += 1;
        if (outcome === 'queue_full') this.shedCalls.inc({ backend });
        // Refused, nothing sent: no duration.
        if (outcome === 'circuit_open' || outcome === 'queue_full' || outcome === 'credential_hold') return;
        this.upstreamDuration.observe((cells.duration ??= this.upstreamDuration.cell({ backend, action })), seconds);
      },
      cacheLookup: (action, result) => {
        lookupCellsOf(action)[result].value += 1;
      },
      coalesced: (action) => this.coalescedCalls.inc({ backend, action }),
      breakerState: (state) => {
        this.setBreakerState(backend, state);
        this.breakerTransitions.inc({ backend, state });
      },
    };
  }

  private setBreakerState(backend: string, current: CircuitState): void {
    for (const state of CIRCUIT_STATES) this.breakerState.set({ backend, state }, state === current ? 1 : 0);
  }

  // ---- families --------------------------------------------------------------------------------

  private counter<N extends string>(name: string, help: string, labelNames: N[]): Counter<N> {
    return new Counter({ name: METRIC_PREFIX + name, help, labelNames, registers: [this.registry] });
  }

  private gauge<N extends string>(name: string, help: string, labelNames: N[], collect?: (gauge: Gauge<N>) => Promise<void>): Gauge<N> {
    return new Gauge({
      name: METRIC_PREFIX + name,
      help,
      labelNames,
      registers: [this.registry],
      // Over the workers of a cluster (src/workers.ts) the maximum: the outbox is one queue for
      // all of them, and a breaker state reads 1 when any worker is in it.
      aggregator: 'max',
      ...(collect ? { collect(this: Gauge<N>) { return collect(this); } } : {}),
    });
  }
}
