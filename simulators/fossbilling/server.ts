/**
 * An embedded FOSSBilling admin API (`POST /api/admin/<module>/<method>`) on node:http, for the
 * sandbox, end-to-end tests and benchmarks. It answers as FOSSBilling's code does (errors inside
 * HTTP 200 except the codes ApiResponseFactory maps), keeps every call for assertions and can be
 * told to misbehave (faults.ts). The mapping never imports it.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { listen } from '../shared/listen.js';
import { FaultPlan, type FossbillingFault, type OutcomeFault } from './faults.js';
import { startProgress, type ProgressOptions } from './progress.js';
import { METHODS, SimError } from './methods.js';
import { createFossbillingSeed, type FossbillingState } from './state.js';

export type { FossbillingFault } from './faults.js';
export type { FossbillingState } from './state.js';
export { createFossbillingSeed } from './state.js';

const MAX_BODY_BYTES = 1024 * 1024;
const ROUTE = /^\/api\/admin\/([a-z_]+)\/([a-z_]+)$/;

export interface FossbillingSimulatorOptions {
  host?: string;
  port?: number;
  /** The staff API token; random when absent. */
  apiToken?: string;
  /** Added to every call. */
  latencyMs?: number;
  /** Keep every call received in `calls` (default true, for tests); the sandbox turns it off, as the list would grow with every call. */
  recordCalls?: boolean;
  /** Methods the token's staff member lacks the permission for (error 403, HTTP 403). */
  deniedMethods?: string[];
  /** Methods this FOSSBilling does not have (another version, a module's API missing): error 740, HTTP 404. */
  missingMethods?: string[];
  /** The data to start from (cloned), or a factory; default `createFossbillingSeed()`. */
  seed?: FossbillingState | (() => FossbillingState);
  /** New orders activate and new invoices get paid on their own (the sandbox's webhook events). */
  progress?: ProgressOptions;
}

export interface RecordedCall {
  /** `module/method`, e.g. `order/create`. */
  method: string;
  params: Record<string, unknown>;
}

export interface FossbillingSimulator {
  readonly url: string;
  readonly apiToken: string;
  readonly state: FossbillingState;
  /** Every call received, in order (none when `recordCalls` is false). */
  readonly calls: RecordedCall[];
  inject(fault: FossbillingFault): void;
  clearFaults(): void;
  close(): Promise<void>;
}

/** ApiResponseFactory::getStatusCode(). */
function httpStatusOf(code: number): number {
  if ([201, 202, 203, 204, 205, 206, 1002, 1004].includes(code)) return 401;
  if (code === 403) return 403;
  if (code === 740) return 404;
  if (code === 429) return 429;
  if (code === 503) return 503;
  if (code === 701 || code === 879) return 400;
  return 200;
}

interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const NO_CACHE = { 'cache-control': 'no-cache, must-revalidate', expires: 'Mon, 26 Jul 1997 05:00:00 GMT', 'content-type': 'application/json' };

function errorReply(message: string, code: number, headers: Record<string, string> = {}): Reply {
  const effective = code || 9999;
  return { status: httpStatusOf(effective), headers: { ...NO_CACHE, ...headers }, body: JSON.stringify({ result: null, error: { message, code: effective } }) };
}

function html(status: number, title: string): Reply {
  return { status, headers: { 'content-type': 'text/html; charset=utf-8' }, body: `<!DOCTYPE html><html><head><title>${title}</title></head><body><h1>${title}</h1></body></html>` };
}

function earlyReply(fault: OutcomeFault | undefined): Reply | undefined {
  switch (fault?.kind) {
    case 'http500':
      return html(500, 'Internal Server Error');
    case 'html':
      return html(200, 'Maintenance');
    case 'rate_limited':
      return errorReply('Rate limit exceeded. Please try again later.', 429, { 'retry-after': String(fault.retryAfterSeconds ?? 30) });
    default:
      return undefined;
  }
}

function authorized(header: string | undefined, token: string): boolean {
  if (!header?.startsWith('Basic ')) return false;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const expected = Buffer.from(`admin:${token}`);
  const given = Buffer.from(decoded);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Api/Dispatcher.php: no such Api class or method, checked after the permission. */
function noSuchMethod(method: string): Reply {
  const [module, name] = method.split('/');
  return errorReply(`Admin API call ${module}_${name} does not exist in module ${module}`, 740);
}

function perform(state: FossbillingState, method: string, params: Record<string, unknown>): Reply {
  const handler = METHODS[method];
  if (!handler) return noSuchMethod(method);
  try {
    return { status: 200, headers: NO_CACHE, body: JSON.stringify({ result: handler(state, params), error: null }) };
  } catch (error) {
    if (error instanceof SimError) return errorReply(error.message, error.code);
    throw error;
  }
}

interface Runtime {
  state: FossbillingState;
  calls: RecordedCall[];
  recordCalls: boolean;
  faults: FaultPlan;
  apiToken: string;
  deniedMethods: ReadonlySet<string>;
  missingMethods: ReadonlySet<string>;
  latencyMs: number;
  shutdown: AbortSignal;
}

const pause = (ms: number, signal: AbortSignal): Promise<void> => (ms > 0 ? sleep(ms, undefined, { signal }) : Promise.resolve());

function send(response: ServerResponse, reply: Reply): void {
  response.writeHead(reply.status, reply.headers);
  response.end(reply.body);
}

async function handle(runtime: Runtime, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const route = ROUTE.exec(new URL(request.url ?? '/', 'http://simulator.invalid').pathname);
  if (!route || request.method !== 'POST') return send(response, html(404, 'Not Found'));
  const body = await readBody(request);
  if (body === undefined) return send(response, html(413, 'Request Entity Too Large'));
  const method = `${route[1]}/${route[2]}`;
  let params: Record<string, unknown>;
  try {
    const parsed: unknown = body === '' ? {} : JSON.parse(body);
    params = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch (error) {
    return send(response, errorReply(`Malformed JSON input: ${(error as Error).message}`, 400));
  }
  if (runtime.recordCalls) runtime.calls.push({ method, params });
  const { delayMs, outcome } = runtime.faults.takeFor(method);
  if (outcome?.kind === 'reset') return void request.socket.destroy();
  await pause(runtime.latencyMs + delayMs, runtime.shutdown);
  if (outcome?.kind === 'hang') return;
  const early = earlyReply(outcome);
  if (early) return send(response, early);
  if (!authorized(request.headers.authorization, runtime.apiToken)) return send(response, errorReply('Authentication Failed', 204));
  if (runtime.deniedMethods.has(method)) return send(response, errorReply(`You need the "${method.split('/')[0]}" permission to perform this action`, 403));
  if (runtime.missingMethods.has(method)) return send(response, noSuchMethod(method));
  const reply = perform(runtime.state, method, params);
  if (outcome?.kind === 'stall_after_effect') await pause(outcome.ms, runtime.shutdown);
  if (outcome?.kind === 'error_after_effect') return send(response, errorReply('Invoice could not be generated', 9999));
  if (outcome?.kind === 'malformed') reply.body = reply.body.slice(0, Math.floor(reply.body.length / 2));
  send(response, reply);
}

export async function startFossbillingSimulator(options: FossbillingSimulatorOptions = {}): Promise<FossbillingSimulator> {
  const host = options.host ?? '127.0.0.1';
  const shutdown = new AbortController();
  // Every answer waiting out its latency listens for the close: hundreds at once under load.
  setMaxListeners(0, shutdown.signal);
  const seed = options.seed;
  const runtime: Runtime = {
    state: seed === undefined ? createFossbillingSeed() : typeof seed === 'function' ? seed() : structuredClone(seed),
    calls: [],
    recordCalls: options.recordCalls ?? true,
    faults: new FaultPlan(),
    apiToken: options.apiToken ?? randomBytes(16).toString('hex'),
    deniedMethods: new Set(options.deniedMethods ?? []),
    missingMethods: new Set(options.missingMethods ?? []),
    latencyMs: options.latencyMs ?? 0,
    shutdown: shutdown.signal,
  };
  const server = createServer((request, response) => {
    handle(runtime, request, response).catch((error: unknown) => {
      if (shutdown.signal.aborted || response.headersSent) return void response.destroy();
      send(response, html(500, `Simulator Error: ${String(error)}`));
    });
  });
  const listening = await listen(server, host, options.port ?? 0);
  const stopProgress = options.progress ? startProgress(runtime.state, options.progress) : () => undefined;
  return {
    url: listening.url,
    apiToken: runtime.apiToken,
    state: runtime.state,
    calls: runtime.calls,
    inject: (fault) => runtime.faults.inject(fault),
    clearFaults: () => runtime.faults.clear(),
    close: async () => {
      stopProgress();
      shutdown.abort();
      await listening.close();
    },
  };
}
