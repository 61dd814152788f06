/**
 * The WHMCS simulator as the sandbox's upstream, and the mapping config that points at a simulator
 * (sandbox, tests and benchmarks).
 */
import type { SandboxOptions, SandboxUpstream } from '../../src/backend/registry.js';
import { type WhmcsConfig, WhmcsConfigSchema } from '../../mappings/whmcs/config.js';
import { SANDBOX_PUBLIC_PRODUCT_IDS } from './fixtures.js';
import { startWhmcsSimulator, type WhmcsSimulator } from './server.js';

export function whmcsSimulatorConfig(simulator: WhmcsSimulator) {
  return {
    url: simulator.url,
    identifier: simulator.identifier,
    secret: simulator.secret,
    publicProductIds: [...SANDBOX_PUBLIC_PRODUCT_IDS],
    // The simulator's clock writes UTC.
    timeZone: 'UTC',
  };
}

export async function startWhmcsSandbox(options: SandboxOptions): Promise<SandboxUpstream<WhmcsConfig>> {
  // Orders and invoices move on their own (after about 5 s), so webhook events flow in the sandbox.
  const simulator = await startWhmcsSimulator({ host: '127.0.0.1', port: 0, latencyMs: options.latencyMs ?? 0, progress: { afterMs: 5_000 }, recordCalls: false });
  return {
    config: WhmcsConfigSchema.parse(whmcsSimulatorConfig(simulator)),
    // Seed clients 1 and 2 hold the demo services, orders and invoices.
    customerIds: ['1', '2'],
    faults: { inject: (kind) => simulator.inject({ kind }), clear: () => simulator.clearFaults() },
    close: () => simulator.close(),
  };
}
