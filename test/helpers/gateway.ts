/**
 * Builds a whole gateway for tests: the real app, the real WHMCS mapping, an embedded simulator on
 * a loopback port, memory stores (or the ones given), an in-memory audit log, and captured logs.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { AdminAuditRecord } from '../../src/admin/audit.js';
import { buildApp } from '../../src/app.js';
import type { Backend } from '../../src/backend/backend.js';
import { MemoryAuditLog } from '../../src/audit.js';
import { parseConfig, type ResolvedConfig } from '../../src/config.js';
import { KeyService } from '../../src/keys/key-service.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { SCOPES, type Scope } from '../../src/keys/scopes.js';
import type { Stores } from '../../src/stores/types.js';
import { startWhmcsSimulator, type WhmcsSimulator } from '../../simulators/whmcs/server.js';
import { whmcsSimulatorConfig } from '../../simulators/whmcs/sandbox.js';
import { BACKENDS } from '../../mappings/index.js';

export const TEST_PEPPER = 'test-pepper-0123456789abcdef0123456789abcdef';
/** 32 bytes, base64: the webhook secret encryption key of test gateways. */
export const TEST_WEBHOOK_KEY = Buffer.alloc(32, 7).toString('base64');

export const GENEROUS_LIMITS = { keyPerMinute: 100_000, keyBurst: 10_000, keyPerDay: 1_000_000, accountPerMinute: 100_000, ipPerMinute: 100_000 };

export interface TestGateway {
  app: FastifyInstance;
  config: ResolvedConfig;
  simulator: WhmcsSimulator;
  stores: Stores;
  audit: MemoryAuditLog;
  adminAudit: MemoryAuditLog<AdminAuditRecord>;
  keyService: KeyService;
  /** Every log line the app wrote, raw. */
  logs: string[];
  /** Named keys: `acme:all`, `acme:read-only`, `acme:<scope>`, `acme:none`, `acme:revoked`, `acme:expired`, `beta:all`. */
  keys: Record<string, string>;
  keyIds: Record<string, string>;
  close(): Promise<void>;
}

export interface TestGatewayOptions {
  profile?: 'A' | 'B';
  stores?: Stores;
  /** Raw config on top of the test defaults (before validation). */
  config?: Record<string, unknown>;
  /** WHMCS mapping config on top of the simulator's. */
  whmcs?: Record<string, unknown>;
  simulator?: WhmcsSimulator;
  /** Whether to issue the standard test keys (off for a second instance sharing a store). */
  issueKeys?: boolean;
  /** Replaces the WHMCS mapping over the simulator (a scripted upstream, for example). */
  backend?: Backend;
  /** Runs the webhook delivery worker and change detector (off by default: other tests send nothing). */
  runWebhooks?: boolean;
  /** Replaces the fake DNS of webhook URL checks (and deliveries). */
  resolveHost?: (host: string) => Promise<string[]>;
}

/** Fake DNS for webhook URL checks: there is no resolver in the test sandbox. */
export async function fakeResolve(host: string): Promise<string[]> {
  if (host.endsWith('.internal-example.com')) return ['10.0.0.7'];
  return ['93.184.215.14'];
}

export async function buildTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const simulator = options.simulator ?? (await startWhmcsSimulator());
  try {
    return await assemble(options, simulator);
  } catch (error) {
    // A gateway that failed to build must not leave its simulator listening (the test would hang).
    if (!options.simulator) await simulator.close();
    throw error;
  }
}

async function assemble(options: TestGatewayOptions, simulator: WhmcsSimulator): Promise<TestGateway> {
  const config = parseConfig({
    profile: options.profile ?? 'A',
    logLevel: 'info',
    keys: { pepper: TEST_PEPPER },
    // Its probes would mix with the calls the suites count; the doctor's own tests turn it on.
    doctor: { enabled: false },
    ...options.config,
    webhooks: { encryptionKey: TEST_WEBHOOK_KEY, ...(options.config?.webhooks as object | undefined) },
    // Generous unless a test asks for the real limits: suites make many calls with one key.
    rateLimits: { ...GENEROUS_LIMITS, ...(options.config?.rateLimits as object | undefined) },
    upstream: {
      backend: 'whmcs',
      whmcs: {
        ...whmcsSimulatorConfig(simulator),
        timeoutMs: 3000,
        ...options.whmcs,
      },
    },
  }, BACKENDS) as ResolvedConfig;
  const stores = options.stores ?? createMemoryStores();
  const audit = new MemoryAuditLog();
  const adminAudit = new MemoryAuditLog<AdminAuditRecord>();
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const app = await buildApp(config, {
    stores,
    audit,
    adminAudit,
    logStream,
    resolveHost: options.resolveHost ?? fakeResolve,
    backends: BACKENDS,
    runWebhooks: options.runWebhooks ?? false,
    ...(options.backend ? { backend: options.backend } : {}),
  });
  await app.ready();
  const keyService = new KeyService(stores.keys, TEST_PEPPER, { issueChecksums: config.keys.issueChecksums });
  const keys: Record<string, string> = {};
  const keyIds: Record<string, string> = {};
  if (options.issueKeys !== false) await issueTestKeys(keyService, keys, keyIds);
  return {
    app,
    config,
    simulator,
    stores,
    audit,
    adminAudit,
    keyService,
    logs,
    keys,
    keyIds,
    async close() {
      await app.close();
      if (!options.simulator) await simulator.close();
    },
  };
}

/** The standard test accounts (acme, beta: WHMCS clients 1 and 2 unless told) and keys. */
export async function issueTestKeys(
  service: KeyService,
  keys: Record<string, string>,
  ids: Record<string, string>,
  upstreamIds: { acme: string; beta: string } = { acme: '1', beta: '2' },
): Promise<void> {
  const issue = async (label: string, accountId: string, scopes: Scope[], extra: { expiresAt?: string } = {}) => {
    const { key, record } = await service.issue({ accountId, name: label, scopes, ...extra });
    keys[label] = key;
    ids[label] = record.id;
  };
  await service.createAccount({ id: 'acme', name: 'Acme Hosting', upstreamId: upstreamIds.acme });
  await service.createAccount({ id: 'beta', name: 'Beta Reseller', upstreamId: upstreamIds.beta });
  await issue('acme:all', 'acme', [...SCOPES]);
  await issue('acme:read-only', 'acme', SCOPES.filter((s) => s.startsWith('read:')));
  await issue('acme:none', 'acme', []);
  for (const scope of SCOPES) await issue(`acme:${scope}`, 'acme', [scope]);
  await issue('acme:revoked', 'acme', [...SCOPES]);
  await service.revoke(ids['acme:revoked'] as string);
  await issue('acme:expired', 'acme', [...SCOPES], { expiresAt: new Date(Date.now() - 1000).toISOString() });
  await issue('beta:all', 'beta', [...SCOPES]);
}

export function bearer(key: string | undefined): Record<string, string> {
  if (key === undefined) throw new Error('no such test key');
  return { authorization: `Bearer ${key}` };
}

/** An idempotent POST of `body` as JSON with acme's all-scopes key and the Idempotency-Key `key`. */
export function postAsAcme(gw: TestGateway, url: string, key: string, body: unknown) {
  return gw.app.inject({
    method: 'POST',
    url,
    headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json', 'idempotency-key': key },
    payload: JSON.stringify(body),
  });
}
