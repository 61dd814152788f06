/**
 * The gateway process: load config, start (with the sandbox upstream when none is configured and
 * SANDBOX=1 asks for it; see src/startup/mode.ts), listen, and shut down gracefully on
 * SIGINT/SIGTERM. The entry (bin/gateway.ts) hands it the registered backends.
 *
 * With `workers` above 1 this process becomes the primary of a node:cluster (src/workers.ts): it
 * loads the config and starts the sandbox once, and its workers each run `serve` on the shared
 * port with the config it sends them.
 */
import cluster from 'node:cluster';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { buildApp, type AppOverrides } from './app.js';
import type { FailedLoginPeers } from './upstream/observer.js';
import { describeUpstream } from './backend/factory.js';
import type { BackendRegistry } from './backend/registry.js';
import { ConfigError, hasUpstream, type ResolvedConfig } from './config.js';
import { configEnvNames, loadConfig } from './load-config.js';
import { buildOpsApp } from './ops/server.js';
import { createRepeatedLog } from './repeated-log.js';
import { startSandbox, type Sandbox } from './sandbox.js';
import { demoKeys, printBanner } from './startup/banner.js';
import { applyHeapSettings } from './startup/heap.js';
import { ListenError, listenOn } from './startup/listen.js';
import type { Stores } from './stores/types.js';
import { misspelledEnvNames } from './startup/env-names.js';
import { publicBaseUrlUnsetWarning } from './openapi/server-url.js';
import { EX_CONFIG, noUpstreamMessage, sandboxRequested } from './startup/mode.js';
import { createStoresOrExit } from './startup/redis-unreachable.js';
import { onStopSignals } from './startup/stop-signals.js';
import { isWorkerMessage, type FromWorker, type ToWorker } from './worker-questions.js';
import { runPrimary, workerCount } from './workers.js';

/** A ConfigError stops the process with EX_CONFIG and its message (no stack); anything else is returned. */
function exitOnConfigError(error: unknown): unknown {
  if (error instanceof ConfigError) {
    process.stderr.write(`reseller-gateway: ${error.message}\n`);
    process.exit(EX_CONFIG);
  }
  return error;
}

function loadOrExit(registry: BackendRegistry): ReturnType<typeof loadConfig> {
  try {
    return loadConfig(registry);
  } catch (error) {
    throw exitOnConfigError(error);
  }
}

/** The config to serve: the configured upstream, or the sandbox's when SANDBOX=1 asks for it. */
export async function resolveStart(registry: BackendRegistry): Promise<{ config: ResolvedConfig; sandbox: Sandbox | undefined }> {
  // Before the config is read: a misspelled name may be why it is refused (KEY_PEPER).
  for (const line of misspelledEnvNames(process.env, configEnvNames(registry))) process.stderr.write(`reseller-gateway: warning: ${line}\n`);
  const loaded = loadOrExit(registry);
  if (hasUpstream(loaded)) {
    const unset = publicBaseUrlUnsetWarning(loaded);
    if (unset) process.stderr.write(`reseller-gateway: warning: ${unset}\n`);
    return { config: loaded, sandbox: undefined };
  }
  if (!sandboxRequested(process.env)) {
    process.stderr.write(`reseller-gateway: ${noUpstreamMessage(registry)}\n`);
    process.exit(EX_CONFIG);
  }
  const latency = process.env.SANDBOX_UPSTREAM_LATENCY_MS;
  const sandbox = await startSandbox(loaded, registry, latency ? Number(latency) : undefined);
  return { config: sandbox.config, sandbox };
}

/**
 * Builds the app on `config` and listens on its port (shared by the workers of a cluster). SIGTERM
 * and SIGINT drain it: unready at once, `ops.unreadyDelayMs` of serving on, then requests in flight
 * finish within `shutdownGraceMs`, the stores and upstream client close, `onClosed` runs (the ops
 * listener, the sandbox), and the process exits 0 (1 if the drain took too long, or at a second
 * signal: see src/startup/stop-signals.ts). Redis not there at start stops it with EX_UNAVAILABLE.
 */
export async function serve(
  config: ResolvedConfig,
  registry: BackendRegistry,
  onClosed: (app: FastifyInstance) => Promise<void>,
  overrides: Pick<AppOverrides, 'failedLoginPeers'> = {},
): Promise<{ app: FastifyInstance; stores: Stores; address: string }> {
  // Kept until the app (and its logger) exists; later ones, at a reconnection, are logged at once.
  const warnings: string[] = [];
  let warn = (warning: string): unknown => warnings.push(warning);
  // A Redis away or refusing the password fails each reconnection (about one a second per
  // client): once a kind, then counted. One at boot is told by the failure to start.
  let connectionError: (message: string) => void = () => undefined;
  // A Redis that lost its data: an error for the operator and a count for an alert (one noticed
  // before the app exists is kept until then, as the warnings are).
  const lost: string[] = [];
  let dataLost = (message: string): unknown => lost.push(message);
  const stores = await createStoresOrExit(config, {
    onWarning: (warning) => warn(warning),
    onConnectionError: (message) => connectionError(message),
    onDataLost: (message) => dataLost(message),
  });
  const app = await buildApp(config, { stores, backends: registry, ...overrides });
  for (const warning of warnings) app.log.warn(warning);
  warn = (warning) => app.log.warn(warning);
  dataLost = (message) => {
    app.log.error(message);
    app.metrics.storeDataLost();
  };
  for (const message of lost) dataLost(message);
  const repeats = createRepeatedLog(app.log);
  connectionError = (message) => repeats.note('warn', 'Redis connection error', { error: message });
  const address = await listenOn(app, 'public', config.host, config.port);
  const upstream = describeUpstream(config, registry);
  app.log.info({ upstream, profile: config.profile, store: stores.kind }, `serving v1 on ${address}; upstream: ${upstream}`);

  const shutdown = async (signal: string): Promise<void> => {
    // Unready first, so that load balancers stop sending while the app still serves.
    app.readiness.beginShutdown();
    app.log.info({ signal }, 'shutting down');
    if (config.ops.unreadyDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, config.ops.unreadyDelayMs));
    const timer = setTimeout(() => {
      app.log.error('shutdown took too long; exiting');
      process.exit(1);
    }, config.shutdownGraceMs);
    timer.unref();
    await app.close();
    repeats.flush();
    await onClosed(app);
    process.exit(0);
  };
  // A worker's primary forces the stop (it kills its workers); a worker that did so itself would
  // cut short the drain a terminal's Ctrl-C starts, which reaches it from the terminal and the primary.
  const force = cluster.isWorker
    ? undefined
    : (signal: string) => {
        app.log.warn({ signal }, 'second signal during shutdown: exiting now');
        process.exit(1);
      };
  onStopSignals((signal) => void shutdown(signal), force);
  return { app, stores, address };
}

async function main(registry: BackendRegistry): Promise<void> {
  const { config, sandbox } = await resolveStart(registry);
  const workers = workerCount(config.workers);
  if (workers > 1) return runPrimary(registry, config, sandbox, workers);

  let opsClose: () => Promise<void> = async () => undefined;
  const { app, stores, address } = await serve(config, registry, async () => {
    await sandbox?.close();
    // Last: the probes answer (unready) for as long as the drain lasts.
    await opsClose();
  });
  // After the public listener: /readyz must not say ready before the app can be reached.
  const ops = buildOpsApp(app);
  const opsAddress = await listenOn(ops, 'ops', config.ops.host, config.ops.port);
  opsClose = () => ops.close();
  app.log.info({ address: opsAddress }, 'ops listener (metrics, probes) ready');
  if (sandbox) printBanner({ config, sandbox, store: stores.kind, address, opsAddress, demo: await demoKeys(stores, config, sandbox), workers: 1 });
}

/** A cluster worker: serves with the config its primary sends; the primary holds the ops listener. */
async function runWorker(registry: BackendRegistry): Promise<void> {
  // The primary's /metrics asks every worker that said hello: until the app is built, nothing is counted.
  let metrics: Registry | undefined;
  process.on('message', (each: unknown) => {
    // Answered by the event loop itself: the primary's /livez asks it of every listening worker.
    if (isWorkerMessage(each) && each.type === 'gateway:livez') process.send?.({ type: 'gateway:alive', id: each.id } satisfies FromWorker);
    if (!isWorkerMessage(each) || each.type !== 'gateway:metrics') return;
    void (metrics?.getMetricsAsJSON() ?? Promise.resolve([])).then((series) => process.send?.({ type: 'gateway:metrics', id: each.id, metrics: series } satisfies FromWorker));
  });
  const message = await new Promise<ToWorker>((resolve) => {
    const listen = (each: unknown): void => {
      if (!isWorkerMessage(each) || each.type !== 'gateway:config') return;
      process.off('message', listen);
      resolve(each);
    };
    process.on('message', listen);
    process.send?.({ type: 'gateway:hello' } satisfies FromWorker);
  });
  if (message.type !== 'gateway:config') return;
  const { app } = await serve(message.config, registry, async () => undefined, { failedLoginPeers: ipcFailedLoginPeers() });
  // The primary's /metrics aggregates every worker's registry; its /readyz asks each worker.
  app.metrics.collectRuntimeMetrics();
  metrics = app.metrics.registry;
  process.on('message', (each: unknown) => {
    if (!isWorkerMessage(each) || each.type !== 'gateway:readyz') return;
    void app.readiness.check().then((report) => process.send?.({ type: 'gateway:ready', id: each.id, report } satisfies FromWorker));
  });
}

/** A worker's failed logins at the upstream, told to the others through the primary (they share the address the upstream bans). */
function ipcFailedLoginPeers(): FailedLoginPeers {
  return {
    tell: (label) => process.send?.({ type: 'gateway:failed-login', label } satisfies FromWorker),
    listen: (hear) =>
      process.on('message', (each: unknown) => {
        if (isWorkerMessage(each) && each.type === 'gateway:failed-login') hear(each.label);
      }),
  };
}

/** Runs the gateway process with the registered backends until a signal stops it. */
export function runGateway(registry: BackendRegistry): void {
  applyHeapSettings();
  (cluster.isWorker ? runWorker(registry) : main(registry)).catch((error: unknown) => {
    // A setting only the built app can check (idempotency.settleMs against the backend's write
    // timeout) is a bad config too: EX_CONFIG and the field, not exit 1 and a stack trace.
    exitOnConfigError(error);
    if (error instanceof ListenError) {
      process.stderr.write(`reseller-gateway: ${error.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`reseller-gateway: failed to start: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
