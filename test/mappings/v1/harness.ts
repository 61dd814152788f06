/**
 * A gateway in front of a scripted v1 upstream (node:http): each test says how the upstream
 * answers and reads what it was sent. Two accounts, `acme` → upstream id `up-acme` and `beta` →
 * `up-beta`, each with its own upstream key.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../src/app.js';
import { MemoryAuditLog } from '../../../src/audit.js';
import { parseConfig, type ResolvedConfig } from '../../../src/config.js';
import { KeyService } from '../../../src/keys/key-service.js';
import { createMemoryStores } from '../../../src/stores/memory/index.js';
import { BACKENDS } from '../../../mappings/index.js';
import { fakeResolve, GENEROUS_LIMITS, issueTestKeys, TEST_PEPPER, TEST_WEBHOOK_KEY } from '../../helpers/gateway.js';

export const UPSTREAM_KEYS = { 'up-acme': 'upkey-acme-0123456789', 'up-beta': 'upkey-beta-9876543210' } as const;

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Script = (request: Received, response: ServerResponse, socket: Socket) => void;

export interface FakeUpstream {
  url: string;
  received: Received[];
  /** How the upstream answers from now on. */
  answer(script: Script): void;
  close(): Promise<void>;
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Script {
  return (_request, response) => {
    const text = JSON.stringify(body);
    response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
    response.end(text);
  };
}

export function problem(status: number, reason: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Script {
  return (_request, response) => {
    const text = JSON.stringify({ type: `https://upstream.example/problems/${reason}`, title: 'x', status, detail: `upstream says ${reason}`, instance: 'urn:uuid:up', reason, request_id: 'upstream-request-id', ...extra });
    response.writeHead(status, { 'content-type': 'application/problem+json; charset=utf-8', ...headers });
    response.end(text);
  };
}

export async function startFakeUpstream(): Promise<FakeUpstream> {
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  let script: Script = json(200, { status: 'ok' });
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
      // Readiness probes are not the calls under test.
      if (entry.url !== '/v1/health') received.push(entry);
      script(entry, response, request.socket);
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    answer(next) {
      script = next;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface PassthroughGateway {
  app: FastifyInstance;
  upstream: FakeUpstream;
  keys: Record<string, string>;
  logs: string[];
  audit: MemoryAuditLog;
  close(): Promise<void>;
}

export interface PassthroughOptions {
  profile?: 'A' | 'B';
  /** On top of the passthrough's test section (short deadlines, a 4 KiB cap). */
  v1?: Record<string, unknown>;
  /** Gateway config on top of the test defaults. */
  config?: Record<string, unknown>;
  /** A path prefix under which the upstream serves /v1 (`/api`: upstream.v1.url ends with it). */
  basePath?: string;
}

export async function buildPassthroughGateway(options: PassthroughOptions = {}): Promise<PassthroughGateway> {
  const upstream = await startFakeUpstream();
  const config = parseConfig(
    {
      profile: options.profile ?? 'A',
      logLevel: 'info',
      keys: { pepper: TEST_PEPPER },
      webhooks: { encryptionKey: TEST_WEBHOOK_KEY },
      doctor: { enabled: false },
      rateLimits: GENEROUS_LIMITS,
      ...options.config,
      upstream: { backend: 'v1', v1: { url: `${upstream.url}${options.basePath ?? ''}`, apiKeys: UPSTREAM_KEYS, timeoutMs: 500, writeTimeoutMs: 700, maxResponseBytes: 4096, ...options.v1 } },
    },
    BACKENDS,
  ) as ResolvedConfig;
  const stores = createMemoryStores();
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const audit = new MemoryAuditLog();
  const app = await buildApp(config, { stores, audit, logStream, resolveHost: fakeResolve, backends: BACKENDS, runWebhooks: false });
  await app.ready();
  const keys: Record<string, string> = {};
  await issueTestKeys(new KeyService(stores.keys, TEST_PEPPER), keys, {}, { acme: 'up-acme', beta: 'up-beta' });
  return {
    app,
    upstream,
    keys,
    logs,
    audit,
    async close() {
      await app.close();
      await upstream.close();
    },
  };
}

export const SERVICE = {
  id: '7',
  product_id: '1',
  product_name: 'VPS S',
  order_id: '3',
  status: 'active',
  hostname: 'vps7.example.com',
  ip_addresses: ['192.0.2.7'],
  billing_cycle: 'monthly',
  recurring_amount: { amount: '9.99', currency: 'USD' },
  registered_on: '2026-01-01',
  next_due_on: '2026-02-01',
  cancellation_requested: false,
  cancellation_effective_on: null,
  config_options: [],
} as const;

export const ORDER = {
  id: '42',
  status: 'pending',
  created_at: '2026-01-31T12:00:00Z',
  total: { amount: '9.99', currency: 'USD' },
  invoice_id: '9',
  payment_status: 'unpaid',
  service_ids: ['7'],
} as const;
