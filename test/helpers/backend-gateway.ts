/**
 * A whole gateway over any registered backend, for suites that run one scenario against each: the
 * backend's own sandbox upstream (its simulator, or a second gateway) on a loopback port, the real
 * app listening on another, memory stores, and the test accounts `acme` and `beta` mapped to the
 * sandbox's two customers, in profile A or B.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { MemoryAuditLog } from '../../src/audit.js';
import type { SandboxUpstream } from '../../src/backend/registry.js';
import { parseConfig, type ResolvedConfig } from '../../src/config.js';
import { KeyService } from '../../src/keys/key-service.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import type { Stores } from '../../src/stores/types.js';
import { BACKENDS } from '../../mappings/index.js';
import { fakeResolve, GENEROUS_LIMITS, issueTestKeys, TEST_PEPPER } from './gateway.js';

export interface BackendGatewayOptions {
  profile: 'A' | 'B';
  /**
   * The backend's config section on top of its sandbox's (shorter deadlines, for example); a
   * function gets the sandbox's section first (to put something in front of its upstream).
   */
  backendConfig?: Record<string, unknown> | ((sandbox: Record<string, unknown>) => Record<string, unknown>);
  /** Raw gateway config on top of the test defaults (before validation): admin tokens, for example. */
  config?: Record<string, unknown>;
}

export interface BackendGateway {
  backend: string;
  app: FastifyInstance;
  /** Origin of the gateway, e.g. `http://127.0.0.1:PORT`. */
  base: string;
  config: ResolvedConfig;
  /** The sandbox upstream (its fault injection). */
  upstream: SandboxUpstream<unknown>;
  /** Takes the upstream down; the gateway stays up. */
  stopUpstream(): Promise<void>;
  /** Every log line the app wrote, raw. */
  logs: string[];
  /** The standard test keys (`acme:all`, `beta:all`, …; see issueTestKeys), and their ids. */
  keys: Record<string, string>;
  keyIds: Record<string, string>;
  stores: Stores;
  close(): Promise<void>;
}

export async function buildBackendGateway(name: string, options: BackendGatewayOptions): Promise<BackendGateway> {
  const plugin = BACKENDS.find((candidate) => candidate.name === name);
  if (!plugin) throw new Error(`backend "${name}" is not registered`);
  const upstream: SandboxUpstream<unknown> = await plugin.sandbox({ profile: options.profile });
  try {
    const base = parseConfig({
      profile: options.profile,
      logLevel: 'info',
      keys: { pepper: TEST_PEPPER },
      // Its probes would add upstream calls the fault tests do not expect.
      doctor: { enabled: false },
      ...options.config,
      rateLimits: GENEROUS_LIMITS,
      upstream: { backend: name },
    }, BACKENDS);
    // As in sandbox mode: the sandbox's section is already validated (and transformed), so the
    // overrides go on top of it, and only onto settings it has.
    const overrides = typeof options.backendConfig === 'function' ? options.backendConfig(upstream.config as Record<string, unknown>) : options.backendConfig;
    const section = { ...(upstream.config as Record<string, unknown>), ...overrides };
    for (const key of Object.keys(overrides ?? {})) {
      if (!(key in (upstream.config as object))) throw new Error(`backend "${name}" has no setting "${key}"`);
    }
    const config = { ...base, upstream: { backend: name, [name]: section } } as ResolvedConfig;
    const stores = createMemoryStores();
    const logs: string[] = [];
    const logStream = new Writable({
      write(chunk, _encoding, done) {
        logs.push(String(chunk));
        done();
      },
    });
    const app = await buildApp(config, { stores, audit: new MemoryAuditLog(), logStream, resolveHost: fakeResolve, backends: BACKENDS });
    const origin = await app.listen({ host: '127.0.0.1', port: 0 });
    let upstreamUp = true;
    const stopUpstream = async () => {
      if (!upstreamUp) return;
      upstreamUp = false;
      await upstream.close();
    };
    const keys: Record<string, string> = {};
    const keyIds: Record<string, string> = {};
    const [acme, beta] = upstream.customerIds;
    await issueTestKeys(new KeyService(stores.keys, TEST_PEPPER), keys, keyIds, { acme, beta });
    return {
      backend: name,
      app,
      base: origin,
      config,
      upstream,
      stopUpstream,
      logs,
      keys,
      keyIds,
      stores,
      async close() {
        await app.close();
        await stopUpstream();
      },
    };
  } catch (error) {
    await upstream.close();
    throw error;
  }
}
