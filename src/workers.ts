/**
 * `workers` above 1: the gateway as a node:cluster on one port. The primary loads the config (and
 * starts the sandbox) once, forks the workers and sends each the config over IPC (so no secret
 * goes into a child's environment); each worker serves the public port (connections are handed
 * out round-robin) with its own app, all sharing Redis. The primary serves the ops listener:
 * `/metrics` aggregates every worker's registry (prom-client's AggregatorRegistry: counters and
 * histograms summed; the outbox and breaker gauges take the maximum), `/readyz` is ready when
 * every worker is, and the admin API runs there (src/admin/primary.ts). SIGTERM/SIGINT: unready at once, every worker drains as a single process does,
 * then the primary exits (0 when every worker exited 0). A worker that dies otherwise is replaced.
 *
 * The memory stores cannot be shared between processes: more than one worker needs Redis.
 */
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { pino } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import type { BackendRegistry } from './backend/registry.js';
import type { GatewayConfig, ResolvedConfig } from './config.js';
import { loggerOptions } from './logger.js';
import { createPrimaryAdminApi } from './admin/primary.js';
import { resolvePepper } from './keys/pepper.js';
import { buildOpsApp, type ReadyReport } from './ops/server.js';
import type { Sandbox } from './sandbox.js';
import { createStores } from './stores/factory.js';
import { EX_CONFIG } from './startup/mode.js';
import { demoKeys, printBanner } from './startup/banner.js';

/** Primary → worker. */
export type ToWorker = { type: 'gateway:config'; config: ResolvedConfig } | { type: 'gateway:readyz'; id: number };
/** Worker → primary. A message sent before the other side listens is lost: the worker asks for its config once it listens. */
export type FromWorker = { type: 'gateway:hello' } | { type: 'gateway:ready'; id: number; report: ReadyReport };

export function isWorkerMessage(message: unknown): message is ToWorker {
  return typeof message === 'object' && message !== null && String((message as { type?: unknown }).type).startsWith('gateway:');
}

export function workerCount(setting: GatewayConfig['workers']): number {
  return setting === 'auto' ? availableParallelism() : setting;
}

/** A worker that keeps dying is replaced at most this often. */
const RESPAWN_DELAY_MS = 1_000;
/** How long /readyz waits for a worker's answer. */
const READY_ASK_MS = 2_000;

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
  const workers = new Set<Worker>();
  const failed = new Set<Worker>();

  const fork = (): Worker => {
    const worker = cluster.fork();
    workers.add(worker);
    worker.on('message', (message: FromWorker) => {
      if (message?.type === 'gateway:hello') worker.send({ type: 'gateway:config', config } satisfies ToWorker);
    });
    worker.once('exit', (code, signal) => {
      workers.delete(worker);
      if (code !== 0) failed.add(worker);
      if (shuttingDown) return;
      log.error({ pid: worker.process.pid, code, signal }, 'worker exited; starting another');
      setTimeout(() => {
        if (!shuttingDown) fork();
      }, RESPAWN_DELAY_MS).unref();
    });
    return worker;
  };

  const listening = Array.from({ length: count }, () =>
    new Promise<string>((resolve) =>
      fork().once('listening', ({ address, port }) => resolve(`http://${address.includes(':') ? `[${address}]` : address}:${port}`)),
    ),
  );
  const address = (await Promise.all(listening))[0] as string;
  log.info({ workers: count, address }, `${count} workers serving v1 on ${address}`);

  const metrics = new AggregatorRegistry();
  // The admin API lives on the ops listener, so the primary serves it over the shared stores (which
  // also issue the sandbox's demo keys).
  const stores = await createStores(config);
  const primaryAdmin = createPrimaryAdminApi(config, stores, log);
  const ops = buildOpsApp({
    admin: primaryAdmin.admin,
    metrics: { registry: { contentType: metrics.contentType, metrics: () => metrics.clusterMetrics() }, collectRuntimeMetrics: () => undefined },
    readiness: { check: () => workersReady([...workers], shuttingDown) },
    log,
  });
  const opsAddress = await ops.listen({ host: config.ops.host, port: config.ops.port });
  log.info({ address: opsAddress }, 'ops listener (metrics, probes) ready');

  if (sandbox) printBanner({ config, sandbox, store: stores.kind, address, opsAddress, demo: await demoKeys(stores, config, sandbox), workers: count });

  const shutdown = async (signal: string): Promise<void> => {
    if (shuttingDown) return;
    shuttingDown = true;
    log.info({ signal }, 'shutting down: draining the workers');
    const exited = [...workers].map((worker) => new Promise<void>((resolve) => (worker.isDead() ? resolve() : worker.once('exit', () => resolve()))));
    for (const worker of workers) worker.process.kill('SIGTERM');
    const timer = setTimeout(() => {
      log.error('workers took too long to drain; exiting');
      process.exit(1);
    }, config.ops.unreadyDelayMs + config.shutdownGraceMs + 5_000);
    timer.unref();
    await Promise.all(exited);
    await sandbox?.close();
    await ops.close();
    await Promise.allSettled([primaryAdmin.close(), stores.close()]);
    process.exit(failed.size === 0 ? 0 : 1);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

let nextQuestion = 0;

/** Ready when every worker says so; a worker that does not answer in time counts as unready. */
async function workersReady(workers: Worker[], shuttingDown: boolean): Promise<ReadyReport> {
  if (shuttingDown || workers.length === 0) return { ready: false, store: 'unchecked', upstream: 'unchecked', shuttingDown };
  const reports = await Promise.all(workers.map((worker) => ask(worker)));
  const all = (pick: (report: ReadyReport) => string): ReadyReport['store'] =>
    reports.every((report) => report && pick(report) === 'ok') ? 'ok' : 'down';
  return {
    ready: reports.every((report) => report?.ready === true),
    store: all((report) => report.store),
    upstream: all((report) => report.upstream),
    shuttingDown: reports.some((report) => report?.shuttingDown === true),
  };
}

function ask(worker: Worker): Promise<ReadyReport | undefined> {
  const id = (nextQuestion += 1);
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish(undefined), READY_ASK_MS);
    const onMessage = (message: unknown): void => {
      const answer = message as FromWorker;
      if (answer?.type === 'gateway:ready' && answer.id === id) finish(answer.report);
    };
    const finish = (report: ReadyReport | undefined): void => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      resolve(report);
    };
    worker.on('message', onMessage);
    worker.send({ type: 'gateway:readyz', id } satisfies ToWorker);
  });
}
