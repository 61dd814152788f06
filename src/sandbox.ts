/**
 * Sandbox mode: what `npm start` runs on a fresh machine. The chosen backend's local upstream (a
 * simulator, or a second gateway) starts on a loopback port, two demo accounts map to two of its
 * customers, and fresh demo keys for them are issued at every start (the previous run's demo keys
 * are revoked).
 */
import type { BackendRegistry } from './backend/registry.js';
import { ConfigError, type GatewayConfig, type ResolvedConfig } from './config.js';
import { KeyService } from './keys/key-service.js';
import { type KeyStore } from './stores/types.js';
import { SCOPES, type Scope } from './keys/scopes.js';

/** The backend a sandbox runs when neither BACKEND nor upstream.backend names one. */
export const DEFAULT_SANDBOX_BACKEND = 'whmcs';

const SANDBOX_ACCOUNTS = [
  { id: 'acme', name: 'Acme Hosting (sandbox)' },
  { id: 'beta', name: 'Beta Reseller (sandbox)' },
] as const;

const READ_SCOPES: Scope[] = SCOPES.filter((scope) => scope.startsWith('read:') && scope !== 'read:credentials');

export interface DemoKey {
  account: string;
  name: string;
  key: string;
}

export interface Sandbox {
  config: ResolvedConfig;
  /** For the start-up line: which backend, and where its local upstream listens. */
  upstream: string;
  /** The demo accounts and the upstream customers they map to. */
  accounts: ReadonlyArray<{ id: string; name: string; upstreamId: string }>;
  close(): Promise<void>;
}

export async function startSandbox(config: GatewayConfig, registry: BackendRegistry, latencyMs?: number): Promise<Sandbox> {
  const name = config.upstream?.backend ?? DEFAULT_SANDBOX_BACKEND;
  const plugin = registry.find((candidate) => candidate.name === name);
  if (!plugin) throw new ConfigError(`invalid configuration:\n  - upstream.backend: unknown backend "${name}"`);
  const upstream = await plugin.sandbox({ profile: config.profile, ...(latencyMs === undefined ? {} : { latencyMs }) });
  return {
    config: {
      ...config,
      upstream: { backend: name, [name]: upstream.config },
      // A developer's receiver on 127.0.0.1 is a valid target here, and only here.
      webhooks: { ...config.webhooks, allowPrivateTargets: config.webhooks.allowPrivateTargets ?? true },
    },
    upstream: plugin.describe(upstream.config),
    accounts: SANDBOX_ACCOUNTS.map((account, index) => ({ ...account, upstreamId: upstream.customerIds[index] as string })),
    close: () => upstream.close(),
  };
}

/** Creates the demo accounts if needed, revokes earlier demo keys, and issues fresh ones. */
export async function issueDemoKeys(store: KeyStore, keys: KeyService, sandbox: Pick<Sandbox, 'accounts'>): Promise<DemoKey[]> {
  const issued: DemoKey[] = [];
  for (const account of sandbox.accounts) {
    const existing = await store.getAccount(account.id);
    // A sandbox started with another backend maps the demo accounts to that backend's customers.
    if (!existing) await keys.createAccount(account);
    else if (existing.upstreamId !== account.upstreamId) await store.putAccount({ ...existing, upstreamId: account.upstreamId });
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
