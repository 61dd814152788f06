/**
 * The sandbox upstream for BACKEND=v1: a second gateway, in sandbox mode over the WHMCS simulator,
 * on a loopback port. The demo accounts are accounts of that gateway, each with its own key there
 * (the passthrough's `apiKeys`), so the whole chain runs: gateway → passthrough → gateway → WHMCS
 * mapping → simulator. It runs the front's profile; its limits are out of reach, since the front
 * enforces the clients' own.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { buildApp } from '../../src/app.js';
import { MemoryAuditLog } from '../../src/audit.js';
import type { BackendRegistry, SandboxOptions, SandboxUpstream } from '../../src/backend/registry.js';
import { parseConfig, type ResolvedConfig } from '../../src/config.js';
import { KeyService } from '../../src/keys/key-service.js';
import { SCOPES } from '../../src/keys/scopes.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { type V1Config, V1ConfigSchema } from '../../mappings/v1/config.js';
import { whmcsPlugin } from '../../mappings/whmcs/plugin.js';
import { startWhmcsSandbox } from '../whmcs/sandbox.js';
import { installEdgeFaults } from './faults.js';

const OUT_OF_REACH = { keyPerMinute: 1_000_000, keyBurst: 100_000, keyPerDay: 100_000_000, accountPerMinute: 1_000_000, ipPerMinute: 1_000_000 };

/** The upstream gateway's accounts that hold the demo data (WHMCS clients 1 and 2 there). */
const UPSTREAM_ACCOUNTS = ['upstream-acme', 'upstream-beta'] as const;

/** Its warnings and errors, marked, on stderr: its requests are the front's, already logged there. */
function upstreamLog(): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      process.stderr.write(`[v1 sandbox upstream] ${String(chunk)}`);
      done();
    },
  });
}

export async function startV1Sandbox(options: SandboxOptions = {}): Promise<SandboxUpstream<V1Config>> {
  const whmcs = await startWhmcsSandbox(options);
  try {
    const registry: BackendRegistry = [{ ...whmcsPlugin, sandbox: startWhmcsSandbox }];
    const pepper = randomBytes(32).toString('base64url');
    const base = parseConfig(
      {
        profile: options.profile ?? 'A',
        logLevel: 'warn',
        keys: { pepper },
        rateLimits: OUT_OF_REACH,
        webhooks: { encryptionKey: randomBytes(32).toString('base64'), allowPrivateTargets: true },
        // Its self-checks would log about the simulator at every start; the doctor CLI covers them.
        doctor: { enabled: false },
      },
      registry,
    );
    const config: ResolvedConfig = { ...base, port: 0, host: '127.0.0.1', upstream: { backend: 'whmcs', whmcs: whmcs.config } };
    const stores = createMemoryStores();
    const app = await buildApp(config, { stores, audit: new MemoryAuditLog(), backends: registry, logStream: upstreamLog() });
    const faults = installEdgeFaults(app);
    const origin = await app.listen({ host: '127.0.0.1', port: 0 });
    const keys = new KeyService(stores.keys, pepper);
    const apiKeys: Record<string, string> = {};
    for (const [index, id] of UPSTREAM_ACCOUNTS.entries()) {
      await keys.createAccount({ id, name: `${id} (sandbox upstream)`, upstreamId: whmcs.customerIds[index] as string });
      apiKeys[id] = (await keys.issue({ accountId: id, name: 'passthrough', scopes: [...SCOPES] })).key;
    }
    return {
      config: V1ConfigSchema.parse({ url: origin, apiKeys }),
      customerIds: UPSTREAM_ACCOUNTS,
      faults,
      async close() {
        faults.release();
        await app.close();
        await whmcs.close();
      },
    };
  } catch (error) {
    await whmcs.close();
    throw error;
  }
}
