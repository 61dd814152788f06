/**
 * Sandbox mode: what `npm start` runs on a fresh machine. An embedded WHMCS simulator on a loopback
 * port is the upstream, two demo accounts map to two of its clients, and fresh demo keys for them
 * are issued at every start (the previous run's demo keys are revoked).
 */
import { startWhmcsSimulator, type WhmcsSimulator } from '../mappings/whmcs/simulator/server.js';
import { SANDBOX_PUBLIC_PRODUCT_IDS } from '../mappings/whmcs/simulator/fixtures.js';
import { WhmcsConfigSchema } from '../mappings/whmcs/config.js';
import type { GatewayConfig, ResolvedConfig } from './config.js';
import { KeyService } from './keys/key-service.js';
import { SCOPES, type KeyStore, type Scope } from './stores/types.js';

const SANDBOX_ACCOUNTS = [
  { id: 'acme', name: 'Acme Hosting (sandbox)', upstreamId: '1' },
  { id: 'beta', name: 'Beta Reseller (sandbox)', upstreamId: '2' },
] as const;

const READ_SCOPES: Scope[] = SCOPES.filter((scope) => scope.startsWith('read:') && scope !== 'read:credentials');

export interface DemoKey {
  account: string;
  name: string;
  key: string;
}

export interface Sandbox {
  config: ResolvedConfig;
  simulator: WhmcsSimulator;
  close(): Promise<void>;
}

/** The WHMCS mapping config that points at a simulator (sandbox, tests and benchmarks). */
export function simulatorUpstream(simulator: WhmcsSimulator) {
  return {
    url: simulator.url,
    identifier: simulator.identifier,
    secret: simulator.secret,
    publicProductIds: [...SANDBOX_PUBLIC_PRODUCT_IDS],
    // The simulator's clock writes UTC.
    timeZone: 'UTC',
  };
}

export async function startSandbox(config: GatewayConfig): Promise<Sandbox> {
  const simulator = await startWhmcsSimulator({
    host: '127.0.0.1',
    port: 0,
    ...(process.env.WHMCS_SIMULATOR_LATENCY_MS ? { latencyMs: Number(process.env.WHMCS_SIMULATOR_LATENCY_MS) } : {}),
  });
  const whmcs = WhmcsConfigSchema.parse(simulatorUpstream(simulator));
  return {
    config: { ...config, upstream: { backend: 'whmcs', whmcs } },
    simulator,
    close: () => simulator.close(),
  };
}

/** Creates the demo accounts if needed, revokes earlier demo keys, and issues fresh ones. */
export async function issueDemoKeys(store: KeyStore, keys: KeyService): Promise<DemoKey[]> {
  const issued: DemoKey[] = [];
  for (const account of SANDBOX_ACCOUNTS) {
    if (!(await store.getAccount(account.id))) await keys.createAccount(account);
    for (const old of await store.listKeys(account.id)) {
      if (old.name.startsWith('sandbox-') && old.revokedAt === null) await keys.revoke(old.id);
    }
    for (const [name, scopes] of [
      ['sandbox-all', [...SCOPES]],
      ['sandbox-read-only', READ_SCOPES],
    ] as const) {
      const { key } = await keys.issue({ accountId: account.id, name, scopes: [...scopes] });
      issued.push({ account: account.id, name, key });
    }
  }
  return issued;
}
