/**
 * What the cluster primary asks its workers over IPC, and their answers: readiness, liveness and
 * metrics (src/workers.ts).
 */
import type { Worker } from 'node:cluster';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { ResolvedConfig } from './config.js';
import type { ReadyReport } from './ops/server.js';

/** Primary → worker. */
export type ToWorker =
  | { type: 'gateway:config'; config: ResolvedConfig }
  | { type: 'gateway:readyz'; id: number }
  | { type: 'gateway:livez'; id: number }
  | { type: 'gateway:metrics'; id: number }
  /** Another worker met a failed login at the upstream (passed on from it). */
  | { type: 'gateway:failed-login'; label: string };
/** Worker → primary. A message sent before the other side listens is lost: the worker asks for its config once it listens. */
export type FromWorker =
  | { type: 'gateway:hello' }
  | { type: 'gateway:ready'; id: number; report: ReadyReport }
  | { type: 'gateway:alive'; id: number }
  | { type: 'gateway:metrics'; id: number; metrics: MetricObjectWithValues<MetricValue<string>>[] }
  /** This worker met a failed login at the upstream: the primary tells every other worker. */
  | { type: 'gateway:failed-login'; label: string };

export function isWorkerMessage(message: unknown): message is ToWorker {
  return typeof message === 'object' && message !== null && String((message as { type?: unknown }).type).startsWith('gateway:');
}

/** How long /readyz waits for a worker's answer. */
const READY_ASK_MS = 2_000;
/**
 * How long /livez waits for a listening worker's answer: its event loop has stopped when it does
 * not come. Below a Kubernetes probe's default timeout (1 s), with room for the primary's own
 * answer: a probe gets 503 `worker_unresponsive` rather than a timeout of its own. A worker at full
 * CPU still answers in time (its event loop lagged 0.2–0.6 s in the overload benchmark).
 */
const LIVE_ASK_MS = 800;
/** How long /metrics waits for a worker's series (prom-client's own cluster timeout). */
const METRICS_ASK_MS = 5_000;

let nextQuestion = 0;

/**
 * Ready when every worker says so. A worker that does not answer in time (each bounds its checks
 * well below READY_ASK_MS) makes the whole unready, its checks `unchecked`: silence says nothing
 * about Redis or the upstream.
 */
export async function workersReady(workers: Worker[], shuttingDown: boolean): Promise<ReadyReport> {
  if (shuttingDown || workers.length === 0) return { ready: false, store: 'unchecked', upstream: 'unchecked', shuttingDown };
  const reports = await Promise.all(
    workers.map(async (worker) => {
      const answer = await ask(worker, 'gateway:readyz', READY_ASK_MS);
      return answer?.type === 'gateway:ready' ? answer.report : undefined;
    }),
  );
  const all = (pick: (report: ReadyReport) => ReadyReport['store']): ReadyReport['store'] => {
    const states = reports.map((report) => (report ? pick(report) : 'unchecked'));
    return states.includes('down') ? 'down' : states.includes('unchecked') ? 'unchecked' : 'ok';
  };
  return {
    ready: reports.every((report) => report?.ready === true),
    store: all((report) => report.store),
    upstream: all((report) => report.upstream),
    shuttingDown: reports.some((report) => report?.shuttingDown === true),
  };
}

/**
 * Whether every worker that listens answers. One that does not still gets its share of the
 * connections, and makes /readyz unready for good: failing liveness lets the orchestrator replace
 * the instance, as it replaces a single process whose event loop has stopped.
 */
export async function workersAlive(listening: Worker[]): Promise<boolean> {
  const answers = await Promise.all(listening.map((worker) => ask(worker, 'gateway:livez', LIVE_ASK_MS)));
  return answers.every((answer) => answer?.type === 'gateway:alive');
}

export type Series = MetricObjectWithValues<MetricValue<string>>[];
/** The kinds of series that only grow: a dead worker's stay in the sum. */
const ACCUMULATING = new Set(['counter', 'histogram']);

/**
 * Every worker's series, summed as prom-client sums them, as one target. A worker that said hello
 * but does not answer fails the scrape, as prom-client's did: leaving its counters out would read
 * as a reset (Prometheus then counts the whole remaining sum as new, and every rate spikes). For
 * the same reason a worker that exits leaves its counters and histograms, as last scraped, in the
 * sum for as long as the primary runs; its gauges (memory, the outbox) go with it.
 */
export class WorkerCounts {
  private readonly last = new Map<Worker, Series>();
  /** The dead workers' counts, folded at the next scrape (at most one entry per worker that died since). */
  private retired: Series[] = [];

  retire(worker: Worker): void {
    const last = this.last.get(worker);
    this.last.delete(worker);
    // At run time `type` is the exposition's word (prom-client's typings say a numeric enum).
    if (last) this.retired.push(last.filter((metric) => ACCUMULATING.has(String(metric.type))));
  }

  /** `own`: the primary's series, summed with nothing (its runtime's carry a label of their own; its ops listener's counts no worker has). */
  async scrape(workers: Worker[], own: Series = []): Promise<string> {
    await Promise.all(
      workers.map(async (worker) => {
        const answer = await ask(worker, 'gateway:metrics', METRICS_ASK_MS);
        if (answer?.type !== 'gateway:metrics') throw new Error('a worker did not send its metrics in time');
        // Kept unless the worker died meanwhile (then its earlier series is already retired, and these would count it twice).
        if (!worker.isDead()) this.last.set(worker, answer.metrics);
      }),
    );
    if (this.retired.length > 1) this.retired = [(await AggregatorRegistry.aggregate(this.retired).getMetricsAsJSON()) as Series];
    return AggregatorRegistry.aggregate([...this.retired, ...this.last.values(), own]).metrics();
  }
}

type Answer = Extract<FromWorker, { id: number }>;

/** The worker's answer to one question, or undefined after `timeoutMs`. */
function ask(worker: Worker, type: 'gateway:readyz' | 'gateway:livez' | 'gateway:metrics', timeoutMs: number): Promise<Answer | undefined> {
  const id = (nextQuestion += 1);
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    const onMessage = (message: unknown): void => {
      const answer = message as FromWorker;
      if (answer !== null && typeof answer === 'object' && 'id' in answer && answer.id === id) finish(answer);
    };
    const finish = (answer: Answer | undefined): void => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      resolve(answer);
    };
    worker.on('message', onMessage);
    worker.send({ type, id } satisfies ToWorker);
  });
}
