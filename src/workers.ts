/**
 * `workers` above 1: the gateway as a node:cluster on one port. The primary loads the config (and
 * starts the sandbox) once, forks the workers and sends each the config over IPC (so no secret
 * goes into a child's environment); each worker serves the public port (connections are handed
 * out round-robin) with its own app, all sharing Redis. The primary serves the ops listener:
 * `/metrics` aggregates every worker's registry (prom-client's AggregatorRegistry: counters and
 * histograms summed; the outbox and breaker gauges take the maximum; a worker still loading has
 * counted nothing and is not asked), `/readyz` is ready when
 * every worker is, and the admin API runs there (src/admin/primary.ts) over stores it connects
 * before forking (Redis not there: EX_UNAVAILABLE, no worker started). SIGTERM/SIGINT: unready at
 * once, every worker drains as a single process does, then the primary exits (0 when every worker
 * drained and exited 0); a second signal kills the workers and exits 1 at once. A worker that dies
 * otherwise is replaced, after a growing delay, and a crash loop stops the primary with 1
 * (src/startup/worker-deaths.ts); workers that die before any of them listens, three times, stop
 * it with 1 (a port taken, a bad module); one that exits EX_CONFIG or EX_UNAVAILABLE before then
 * stops it with the same code at once.
 *
 * The memory stores cannot be shared between processes: more than one worker needs Redis.
 */
import cluster, { type Worker } from 'node:cluster';
import type { FastifyInstance } from 'fastify';
import { availableParallelism } from 'node:os';
import { pino } from 'pino';
import { AggregatorRegistry, Registry, collectDefaultMetrics } from 'prom-client';
import type { BackendRegistry } from './backend/registry.js';
import type { GatewayConfig, ResolvedConfig } from './config.js';
import { configEnvNames } from './load-config.js';
import { loggerOptions } from './logger.js';
import { createPrimaryAdminApi } from './admin/primary.js';
import { resolvePepper } from './keys/pepper.js';
import { METRIC_PREFIX, OpsRequestCounts } from './ops/metrics.js';
import { buildOpsApp } from './ops/server.js';
import { createRepeatedLog } from './repeated-log.js';
import type { Sandbox } from './sandbox.js';
import type { Stores } from './stores/types.js';
import { EX_CONFIG } from './startup/mode.js';
import { demoKeys, printBanner } from './startup/banner.js';
import { listenOn } from './startup/listen.js';
import { CGROUP_ROOT, cgroupCpuLimit, SELF_CGROUP } from './startup/cpu-limit.js';
import { createStoresOrExit, EX_UNAVAILABLE } from './startup/redis-unreachable.js';
import { onStopSignals } from './startup/stop-signals.js';
import { WorkerDeaths } from './startup/worker-deaths.js';
import { WorkerCounts, workersAlive, workersReady, type FromWorker, type Series, type ToWorker } from './worker-questions.js';

/** `auto`: one per core, no more than the process's cgroup CPU quota allows (read under `cgroupRoot`). */
export function workerCount(setting: GatewayConfig['workers'], cgroupRoot = CGROUP_ROOT, selfCgroup = SELF_CGROUP): number {
  if (setting !== 'auto') return setting;
  return Math.min(availableParallelism(), cgroupCpuLimit(cgroupRoot, selfCgroup) ?? Infinity);
}

/** Before any worker listens, one that dies is replaced after this long. */
const BOOT_RESPAWN_DELAY_MS = 1_000;
/** Workers that die before any of them listens, this many times: the primary gives up (exit 1). */
const BOOT_ATTEMPTS = 3;
/** Exits a worker makes before serving that no other worker would mend: the primary stops with the same code. */
const REFUSALS = new Set<number>([EX_CONFIG, EX_UNAVAILABLE]);

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
  // A Redis away fails each reconnection of the primary's stores: once a kind, then counted.
  const repeats = createRepeatedLog(log);
  let shuttingDown = false;
  /** True once a worker listens: a worker that dies after that counts toward a crash loop, before it toward a failed boot. */
  let serving = false;
  let bootFailures = 0;
  const deaths = new WorkerDeaths(count);
  /** A worker that did not exit 0 while draining: the primary then exits 1. */
  let drainFailed = false;
  const workers = new Set<Worker>();
  /** The live workers that listen on the public port. */
  const listeners = new Set<Worker>();
  /** Workers that said hello: they answer metrics questions (a message sent earlier would be lost). */
  const greeted = new WeakSet<Worker>();
  /** Every worker's series as last scraped, and what the dead ones had counted. */
  const counts = new WorkerCounts();
  /** What the primary runs beside the workers (the stores from before the fork, the rest once they listen); closed at shutdown. */
  let ops: FastifyInstance | undefined;
  let stores: Stores | undefined;
  let primaryAdmin: ReturnType<typeof createPrimaryAdminApi> | undefined;

  // Installed before any worker is forked: a signal during boot drains what has started.
  const shutdown = async (reason: string, code = 0): Promise<void> => {
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
    repeats.flush();
    process.exit(code !== 0 ? code : drainFailed ? 1 : 0);
  };
  onStopSignals(
    (signal) => void shutdown(signal),
    (signal) => {
      log.warn({ signal }, 'second signal during shutdown: exiting now');
      for (const worker of workers) worker.process.kill('SIGKILL');
      process.exit(1);
    },
  );

  // The workers take their config over IPC: the variables it was read from (secrets among them) stay out of their environment.
  const workerEnv = Object.fromEntries(configEnvNames(registry).map((name) => [name, undefined]));
  const fork = (): Worker => {
    const worker = cluster.fork(workerEnv);
    workers.add(worker);
    worker.on('message', (message: FromWorker) => {
      // The workers share the address the upstream bans after failed logins: each counts the others'.
      if (message?.type === 'gateway:failed-login') {
        for (const other of workers) if (other !== worker && other.isConnected()) other.send({ type: 'gateway:failed-login', label: message.label } satisfies ToWorker);
      }
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
      // A config error the workers found (one only the built app checks), or Redis gone since the
      // primary connected, will not mend by starting another: they said why on stderr.
      if (!serving && code !== null && REFUSALS.has(code)) {
        void shutdown('the workers could not start', code);
        return;
      }
      // Workers that keep dying before any of them listens will not start (a port taken, say), as a single process would not.
      if (!serving && (bootFailures += 1) >= BOOT_ATTEMPTS) {
        log.error({ worker_pid: worker.process.pid, code, signal, attempts: bootFailures }, 'workers failed to start; exiting');
        void shutdown('workers failed to start', 1);
        return;
      }
      // Serving: a crash loop backs off, then ends the process for the orchestrator to see.
      const next = serving ? deaths.note() : { respawnInMs: BOOT_RESPAWN_DELAY_MS };
      if ('giveUp' in next) {
        log.error({ worker_pid: worker.process.pid, code, signal, deaths: next.deaths }, 'workers keep dying; exiting');
        void shutdown('workers keep dying', 1);
        return;
      }
      log.error({ worker_pid: worker.process.pid, code, signal, respawn_in_ms: next.respawnInMs }, 'worker exited; starting another');
      setTimeout(() => {
        if (!shuttingDown) fork();
      }, next.respawnInMs).unref();
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
  // Connected before any worker starts: a Redis that is not there stops the boot here, once.
  // Its warnings (an evicting Redis) and a loss of Redis's data are the workers' to say and count.
  stores = await createStoresOrExit(config, { onConnectionError: (message) => repeats.note('warn', 'Redis connection error', { error: message }) });
  for (let index = 0; index < count; index += 1) fork();
  const address = await listening;
  serving = true;
  if (shuttingDown) return;

  // The admin API lives on the ops listener, so the primary serves it over the shared stores (which
  // also issue the sandbox's demo keys).
  primaryAdmin = createPrimaryAdminApi(config, stores, log, registry);
  // The primary's own memory, CPU and event loop (it holds the admin API, the sandbox, the ops
  // listener), labelled so that they stay apart from the workers' sums.
  const own = new Registry();
  own.setDefaultLabels({ process: 'primary' });
  collectDefaultMetrics({ register: own, prefix: METRIC_PREFIX });
  // The ops listener's requests, only the primary's: unlabelled, as a single process has them.
  const opsCounted = new Registry();
  ops = buildOpsApp({
    admin: primaryAdmin.admin,
    metrics: {
      registry: {
        contentType: AggregatorRegistry.PROMETHEUS_CONTENT_TYPE,
        metrics: async () => {
          const primarySeries = [...(await own.getMetricsAsJSON()), ...(await opsCounted.getMetricsAsJSON())] as Series;
          return counts.scrape([...workers].filter((worker) => greeted.has(worker) && worker.isConnected()), primarySeries);
        },
      },
      collectRuntimeMetrics: () => undefined,
      opsRequests: new OpsRequestCounts(opsCounted),
    },
    readiness: { check: () => workersReady([...workers], shuttingDown) },
    alive: () => workersAlive([...listeners].filter((worker) => worker.isConnected())),
    log,
  });
  const opsAddress = await listenOn(ops, 'ops', config.ops.host, config.ops.port);
  log.info({ address: opsAddress }, 'ops listener (metrics, probes) ready');

  if (sandbox) printBanner({ config, sandbox, store: stores.kind, address, opsAddress, demo: await demoKeys(stores, config, sandbox), workers: count });
}
