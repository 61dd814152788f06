/**
 * `workers` above 1: the gateway as a node:cluster on one port. The primary loads the config (and
 * starts the sandbox) once, forks the workers and sends each the config over IPC (so no secret
 * goes into a child's environment); each worker serves the public port (connections are handed
 * out round-robin) with its own app, all sharing Redis. The primary serves the ops listener:
 * `/metrics` aggregates every worker's registry (prom-client's AggregatorRegistry: counters and
 * histograms summed; the outbox and breaker gauges take the maximum; a worker still loading has
 * counted nothing and is not asked), `/readyz` is ready when
 * every worker is, and the admin API runs there (src/admin/primary.ts). SIGTERM/SIGINT: unready at
 * once, every worker drains as a single process does, then the primary exits (0 when every worker
 * drained and exited 0). A worker that dies otherwise is replaced; workers that die before any of
 * them listens, three times, stop the primary with 1 (a port taken, a bad module); one that exits
 * EX_CONFIG before then stops it with EX_CONFIG at once.
 *
 * The memory stores cannot be shared between processes: more than one worker needs Redis.
 */
import cluster, { type Worker } from 'node:cluster';
import type { FastifyInstance } from 'fastify';
import { availableParallelism } from 'node:os';
import { pino } from 'pino';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { BackendRegistry } from './backend/registry.js';
import type { GatewayConfig, ResolvedConfig } from './config.js';
import { configEnvNames } from './load-config.js';
import { loggerOptions } from './logger.js';
import { createPrimaryAdminApi } from './admin/primary.js';
import { resolvePepper } from './keys/pepper.js';
import { buildOpsApp, type ReadyReport } from './ops/server.js';
import type { Sandbox } from './sandbox.js';
import { createStores } from './stores/factory.js';
import type { Stores } from './stores/types.js';
import { EX_CONFIG } from './startup/mode.js';
import { demoKeys, printBanner } from './startup/banner.js';
import { listenOn } from './startup/listen.js';

/** Primary → worker. */
export type ToWorker =
  | { type: 'gateway:config'; config: ResolvedConfig }
  | { type: 'gateway:readyz'; id: number }
  | { type: 'gateway:livez'; id: number }
  | { type: 'gateway:metrics'; id: number };
/** Worker → primary. A message sent before the other side listens is lost: the worker asks for its config once it listens. */
export type FromWorker =
  | { type: 'gateway:hello' }
  | { type: 'gateway:ready'; id: number; report: ReadyReport }
  | { type: 'gateway:alive'; id: number }
  | { type: 'gateway:metrics'; id: number; metrics: MetricObjectWithValues<MetricValue<string>>[] };

export function isWorkerMessage(message: unknown): message is ToWorker {
  return typeof message === 'object' && message !== null && String((message as { type?: unknown }).type).startsWith('gateway:');
}

export function workerCount(setting: GatewayConfig['workers']): number {
  return setting === 'auto' ? availableParallelism() : setting;
}

/** A worker that keeps dying is replaced at most this often. */
const RESPAWN_DELAY_MS = 1_000;
/** Workers that die before any of them listens, this many times: the primary gives up (exit 1). */
const BOOT_ATTEMPTS = 3;
/** How long /readyz waits for a worker's answer. */
const READY_ASK_MS = 2_000;
/** How long /livez waits for a listening worker's answer: its event loop has stopped when it does not come. */
const LIVE_ASK_MS = 2_000;
/** How long /metrics waits for a worker's series (prom-client's own cluster timeout). */
const METRICS_ASK_MS = 5_000;

export async function runPrimary(registry: BackendRegistry, loaded: ResolvedConfig, sandbox: Sandbox | undefined, count: number): Promise<void> {
  // The sandbox makes its pepper on first use: made here once, or the workers race to make their own
  // (and a key hashed by one would be refused by the other).
  const config: ResolvedConfig = { ...loaded, keys: { ...loaded.keys, pepper: resolvePepper(loaded) } };
  if (!config.redisUrl && !config.redisClusterNodes?.length) {
    process.stderr.write(
      `reseller-gateway: invalid configuration:\n  - workers: ${count} workers need the Redis stores (set REDIS_URL or REDIS_CLUSTER_NODES); ` +
        'with the memory stores every worker would keep its own limits, idempotency records and keys. Set WORKERS=1 to run without Redis.\n',
    );
    await sandbox?.close();
    process.exit(EX_CONFIG);
  }
  const options = loggerOptions(config) as pino.LoggerOptions & { stream: pino.DestinationStream };
  const log = pino(options, options.stream);
  let shuttingDown = false;
  /** True once a worker listens: a worker that dies after that is replaced, before it counts toward giving up. */
  let serving = false;
  let bootFailures = 0;
  /** A worker that did not exit 0 while draining: the primary then exits 1. */
  let drainFailed = false;
  const workers = new Set<Worker>();
  /** The live workers that listen on the public port. */
  const listeners = new Set<Worker>();
  /** Workers that said hello: they answer metrics questions (a message sent earlier would be lost). */
  const greeted = new WeakSet<Worker>();
  /** Every worker's series as last scraped, and what the dead ones had counted. */
  const counts = new WorkerCounts();
  /** What the primary runs beside the workers, once they listen; closed at shutdown. */
  let ops: FastifyInstance | undefined;
  let stores: Stores | undefined;
  let primaryAdmin: ReturnType<typeof createPrimaryAdminApi> | undefined;

  // Installed before any worker is forked: a signal during boot drains what has started.
  const shutdown = async (reason: string, code: 0 | 1 | typeof EX_CONFIG = 0): Promise<void> => {
    if (shuttingDown) return;
    shuttingDown = true;
    log.info({ reason }, 'shutting down: draining the workers');
    const exited = [...workers].map((worker) => new Promise<void>((resolve) => (worker.isDead() ? resolve() : worker.once('exit', () => resolve()))));
    for (const worker of workers) worker.process.kill('SIGTERM');
    const timer = setTimeout(() => {
      log.error('workers took too long to drain; exiting');
      process.exit(1);
    }, config.ops.unreadyDelayMs + config.shutdownGraceMs + 5_000);
    timer.unref();
    await Promise.all(exited);
    await sandbox?.close();
    await ops?.close();
    await Promise.allSettled([primaryAdmin?.close(), stores?.close()]);
    process.exit(code !== 0 ? code : drainFailed ? 1 : 0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  // The workers take their config over IPC: the variables it was read from (secrets among them) stay out of their environment.
  const workerEnv = Object.fromEntries(configEnvNames(registry).map((name) => [name, undefined]));
  const fork = (): Worker => {
    const worker = cluster.fork(workerEnv);
    workers.add(worker);
    worker.on('message', (message: FromWorker) => {
      if (message?.type !== 'gateway:hello') return;
      greeted.add(worker);
      worker.send({ type: 'gateway:config', config } satisfies ToWorker);
    });
    worker.once('exit', (code, signal) => {
      workers.delete(worker);
      listeners.delete(worker);
      counts.retire(worker);
      if (shuttingDown) {
        // Ended by the signal itself: a worker still loading, before its own handler (it served nothing).
        // SIGINT too: a terminal's Ctrl-C reaches every process of the group, the workers with the primary.
        if (code !== 0 && signal !== 'SIGTERM' && signal !== 'SIGINT') drainFailed = true;
        return;
      }
      // A config error the workers found (one only the built app checks) will not mend by starting another.
      if (!serving && code === EX_CONFIG) {
        void shutdown('the workers refused the configuration', EX_CONFIG);
        return;
      }
      // Workers that keep dying before any of them listens will not start (a port taken, say), as a single process would not.
      if (!serving && (bootFailures += 1) >= BOOT_ATTEMPTS) {
        log.error({ worker_pid: worker.process.pid, code, signal, attempts: bootFailures }, 'workers failed to start; exiting');
        void shutdown('workers failed to start', 1);
        return;
      }
      log.error({ worker_pid: worker.process.pid, code, signal }, 'worker exited; starting another');
      setTimeout(() => {
        if (!shuttingDown) fork();
      }, RESPAWN_DELAY_MS).unref();
    });
    return worker;
  };

  // The first worker to listen, whichever it is (a replacement included), says where v1 is served;
  // the workers serve once every one listens (the others may still be loading when the first does).
  let announced = false;
  const listening = new Promise<string>((resolve) =>
    cluster.on('listening', (worker, { address, port }) => {
      const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
      resolve(url);
      listeners.add(worker);
      if (announced || shuttingDown || listeners.size < count) return;
      announced = true;
      log.info({ workers: count, address: url }, `${count} workers serving v1 on ${url}`);
    }),
  );
  for (let index = 0; index < count; index += 1) fork();
  const address = await listening;
  serving = true;
  if (shuttingDown) return;

  // The admin API lives on the ops listener, so the primary serves it over the shared stores (which
  // also issue the sandbox's demo keys).
  stores = await createStores(config);
  primaryAdmin = createPrimaryAdminApi(config, stores, log, registry);
  ops = buildOpsApp({
    admin: primaryAdmin.admin,
    metrics: {
      registry: {
        contentType: AggregatorRegistry.PROMETHEUS_CONTENT_TYPE,
        metrics: () => counts.scrape([...workers].filter((worker) => greeted.has(worker) && worker.isConnected())),
      },
      collectRuntimeMetrics: () => undefined,
    },
    readiness: { check: () => workersReady([...workers], shuttingDown) },
    alive: () => workersAlive([...listeners].filter((worker) => worker.isConnected())),
    log,
  });
  const opsAddress = await listenOn(ops, 'ops', config.ops.host, config.ops.port);
  log.info({ address: opsAddress }, 'ops listener (metrics, probes) ready');

  if (sandbox) printBanner({ config, sandbox, store: stores.kind, address, opsAddress, demo: await demoKeys(stores, config, sandbox), workers: count });
}

let nextQuestion = 0;

/**
 * Ready when every worker says so. A worker that does not answer in time (each bounds its checks
 * well below READY_ASK_MS) makes the whole unready, its checks `unchecked`: silence says nothing
 * about Redis or the upstream.
 */
async function workersReady(workers: Worker[], shuttingDown: boolean): Promise<ReadyReport> {
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
async function workersAlive(listening: Worker[]): Promise<boolean> {
  const answers = await Promise.all(listening.map((worker) => ask(worker, 'gateway:livez', LIVE_ASK_MS)));
  return answers.every((answer) => answer?.type === 'gateway:alive');
}

type Series = MetricObjectWithValues<MetricValue<string>>[];
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

  async scrape(workers: Worker[]): Promise<string> {
    await Promise.all(
      workers.map(async (worker) => {
        const answer = await ask(worker, 'gateway:metrics', METRICS_ASK_MS);
        if (answer?.type !== 'gateway:metrics') throw new Error('a worker did not send its metrics in time');
        // Kept unless the worker died meanwhile (then its earlier series is already retired, and these would count it twice).
        if (!worker.isDead()) this.last.set(worker, answer.metrics);
      }),
    );
    if (this.retired.length > 1) this.retired = [(await AggregatorRegistry.aggregate(this.retired).getMetricsAsJSON()) as Series];
    return AggregatorRegistry.aggregate([...this.retired, ...this.last.values()]).metrics();
  }
}

/** The worker's answer to one question, or undefined after `timeoutMs`. */
function ask(worker: Worker, type: 'gateway:readyz' | 'gateway:livez' | 'gateway:metrics', timeoutMs: number): Promise<Exclude<FromWorker, { type: 'gateway:hello' }> | undefined> {
  const id = (nextQuestion += 1);
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    const onMessage = (message: unknown): void => {
      const answer = message as FromWorker;
      if (answer?.type !== 'gateway:hello' && answer?.id === id) finish(answer);
    };
    const finish = (answer: Exclude<FromWorker, { type: 'gateway:hello' }> | undefined): void => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      resolve(answer);
    };
    worker.on('message', onMessage);
    worker.send({ type, id } satisfies ToWorker);
  });
}
