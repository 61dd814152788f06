/**
 * The gateway process: load config, start (with the sandbox upstream when none is configured and
 * SANDBOX=1 asks for it; see src/startup/mode.ts), listen, and shut down gracefully on
 * SIGINT/SIGTERM. The entry (bin/gateway.ts) hands it the registered backends.
 */
import { buildApp } from './app.js';
import { describeUpstream } from './backend/factory.js';
import type { BackendRegistry } from './backend/registry.js';
import { ConfigError, hasUpstream, loadConfig, type ResolvedConfig } from './config.js';
import { KeyService } from './keys/key-service.js';
import { resolvePepper } from './keys/pepper.js';
import { buildOpsApp } from './ops/server.js';
import { issueDemoKeys, startSandbox, type Sandbox } from './sandbox.js';
import { createStores } from './stores/factory.js';
import { EX_CONFIG, noUpstreamMessage, mayPrintDemoKeys, sandboxRequested } from './startup/mode.js';

function loadOrExit(registry: BackendRegistry): ReturnType<typeof loadConfig> {
  try {
    return loadConfig(registry);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`reseller-gateway: ${error.message}\n`);
      process.exit(EX_CONFIG);
    }
    throw error;
  }
}

async function main(registry: BackendRegistry): Promise<void> {
  const loaded = loadOrExit(registry);
  let sandbox: Sandbox | undefined;
  let config: ResolvedConfig;
  if (hasUpstream(loaded)) {
    config = loaded;
  } else if (sandboxRequested(process.env)) {
    const latency = process.env.SANDBOX_UPSTREAM_LATENCY_MS;
    sandbox = await startSandbox(loaded, registry, latency ? Number(latency) : undefined);
    config = sandbox.config;
  } else {
    process.stderr.write(`reseller-gateway: ${noUpstreamMessage(registry)}\n`);
    process.exit(EX_CONFIG);
  }
  const stores = await createStores(config);
  const app = await buildApp(config, { stores, backends: registry });
  const address = await app.listen({ host: config.host, port: config.port });
  const upstream = describeUpstream(config, registry);
  app.log.info({ upstream, profile: config.profile, store: stores.kind }, `serving v1 on ${address}; upstream: ${upstream}`);
  // After the public listener: /readyz must not say ready before the app can be reached.
  const ops = buildOpsApp(app);
  const opsAddress = await ops.listen({ host: config.ops.host, port: config.ops.port });
  app.log.info({ address: opsAddress }, 'ops listener (metrics, probes) ready');

  if (sandbox) {
    const keys = new KeyService(stores.keys, resolvePepper(config));
    const demo = await issueDemoKeys(stores.keys, keys, sandbox);
    // Printed to the terminal on purpose (sandbox keys on simulator data), never to the log, and
    // only where no one else can reach the listener unless asked.
    const printKeys = mayPrintDemoKeys(config.host, process.env);
    const lines = [
      '',
      `reseller-gateway sandbox (profile ${config.profile}, ${stores.kind} store) on ${address}`,
      `upstream: ${upstream} (local sandbox upstream)`,
      `ops (metrics, probes): ${opsAddress}`,
      ...(printKeys
        ? [
            'demo keys (new at every start; the previous ones are revoked):',
            ...demo.map((d) => `  ${d.account.padEnd(5)} ${d.name.padEnd(18)} ${d.key}`),
            '',
            `try: curl -s -H "Authorization: Bearer ${demo[0]?.key}" ${address}/v1/me`,
          ]
        : [
            `demo keys issued but not printed: ${config.host} is not a loopback address.`,
            'Set SANDBOX_PRINT_KEYS=1 to print them, or issue one with the key CLI (reseller-keys issue).',
          ]),
      '',
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  }

  let closing = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (closing) return;
    closing = true;
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
    await sandbox?.close();
    // Last: the probes answer (unready) for as long as the drain lasts.
    await ops.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

/** Runs the gateway process with the registered backends until a signal stops it. */
export function runGateway(registry: BackendRegistry): void {
  main(registry).catch((error: unknown) => {
    process.stderr.write(`reseller-gateway: failed to start: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
