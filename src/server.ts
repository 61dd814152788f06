/**
 * Process entry: load config, start (with the sandbox upstream when none is configured), listen,
 * and shut down gracefully on SIGINT/SIGTERM.
 */
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type ResolvedConfig } from './config.js';
import { KeyService } from './keys/key-service.js';
import { resolvePepper } from './keys/pepper.js';
import { issueDemoKeys, startSandbox, type Sandbox } from './sandbox.js';
import { createStores } from './stores/factory.js';

function loadOrExit(): ReturnType<typeof loadConfig> {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`reseller-gateway: ${error.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
}

async function main(): Promise<void> {
  const loaded = loadOrExit();
  let sandbox: Sandbox | undefined;
  let config: ResolvedConfig;
  if (loaded.upstream) {
    config = loaded as ResolvedConfig;
  } else {
    sandbox = await startSandbox(loaded);
    config = sandbox.config;
  }
  const stores = await createStores(config);
  const app = await buildApp(config, { stores });
  const address = await app.listen({ host: config.host, port: config.port });

  if (sandbox) {
    const keys = new KeyService(stores.keys, resolvePepper(config));
    const demo = await issueDemoKeys(stores.keys, keys);
    const lines = [
      '',
      `reseller-gateway sandbox (profile ${config.profile}, ${stores.kind} store) on ${address}`,
      `upstream: embedded WHMCS simulator at ${sandbox.simulator.url}`,
      'demo keys (new at every start; the previous ones are revoked):',
      ...demo.map((d) => `  ${d.account.padEnd(5)} ${d.name.padEnd(18)} ${d.key}`),
      '',
      `try: curl -s -H "Authorization: Bearer ${demo[0]?.key}" ${address}/v1/me`,
      '',
    ];
    // Printed to the terminal on purpose (sandbox keys on simulator data); never sent to the log.
    process.stdout.write(`${lines.join('\n')}\n`);
  }

  let closing = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      app.log.error('shutdown took too long; exiting');
      process.exit(1);
    }, config.shutdownGraceMs);
    timer.unref();
    await app.close();
    await sandbox?.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((error: unknown) => {
  process.stderr.write(`reseller-gateway: failed to start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
