/**
 * The sandbox upstream for BACKEND=fossbilling: a simulator with the seed data, and the mapping's
 * config section pointing at it. Seed clients 1 and 2 hold the demo accounts' data.
 */
import type { SandboxOptions, SandboxUpstream } from '../../src/backend/registry.js';
import { type FossbillingConfig, FossbillingConfigSchema } from '../../mappings/fossbilling/config.js';
import { startFossbillingSimulator } from './server.js';

export async function startFossbillingSandbox(options: SandboxOptions = {}): Promise<SandboxUpstream<FossbillingConfig>> {
  const simulator = await startFossbillingSimulator({ latencyMs: options.latencyMs ?? 0, progress: { afterMs: 5_000 }, recordCalls: false });
  return {
    config: FossbillingConfigSchema.parse({ url: simulator.url, apiToken: simulator.apiToken }),
    customerIds: ['1', '2'],
    faults: { inject: (kind) => simulator.inject({ kind }), clear: () => simulator.clearFaults() },
    close: () => simulator.close(),
  };
}
