/**
 * An embedded WHMCS External API (`POST /includes/api.php`) on node:http, for sandbox mode,
 * end-to-end tests and benchmarks. It follows the facts file, quirks included, keeps every call it
 * receives for assertions, and can be told to misbehave (see faults.ts).
 */
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { listen } from '../shared/listen.js';
import { AccessControl } from './access.js';
import { findAction } from './actions/index.js';
import { failure, type SimulatorQuirks } from './actions/shared.js';
import { FaultPlan, type OutcomeFault, type WhmcsFault } from './faults.js';
import { createSeedState } from './fixtures.js';
import { startProgress, type ProgressOptions } from './progress.js';
import type { SimulatorState } from './model.js';
import {
  encodeNvp,
  encodePhpJson,
  encodeXml,
  normalizeActionName,
  parsePhpForm,
  sanitizeInput,
  scalarParam,
  type ApiObject,
  type FormArray,
} from './protocol.js';

export type { WhmcsFault } from './faults.js';
export type { SimulatorState } from './model.js';

const API_PATH = '/includes/api.php';

/** Far above any real API request; stops a runaway client from filling memory. */
const MAX_BODY_BYTES = 1024 * 1024;

export interface WhmcsSimulatorOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (an ephemeral port). */
  port?: number;
  /** Random when absent. */
  identifier?: string;
  /** Random when absent. */
  secret?: string;
  /** When set, `accesskey` is checked (and a correct one skips `allowedIps`). */
  accessKey?: string;
  /** Added to every call before it is processed. */
  latencyMs?: number;
  /**
   * Keep every call received in `calls` (default true, for tests). The sandbox and the benches turn
   * it off: they serve for as long as they run, and the list would grow with every call.
   */
  recordCalls?: boolean;
  /** The data to start from (cloned), or a factory for it; default `createSeedState()`. */
  seed?: SimulatorState | (() => SimulatorState);
  /** Ban the caller's IP after this many failed authentications; off by default so tests cannot lock themselves out. */
  banAfterFailures?: number;
  /** An API role: only these actions are allowed (any case). */
  allowedActions?: string[];
  /** The API IP allow-list (e.g. `['127.0.0.1']`); absent allows every address. */
  allowedIps?: string[];
  /** Answer variants to start with (all off by default); they can be switched later through `quirks`. */
  quirks?: Partial<SimulatorQuirks>;
  /** Off by default: pending orders become active and unpaid invoices paid on their own (sandbox). */
  progress?: ProgressOptions;
}

export interface RecordedCall {
  /** Normalized action name, e.g. `addorder`. */
  action: string;
  /** The parameters as received (before WHMCS's HTML-encoding), PHP arrays as nested objects. */
  params: Record<string, unknown>;
  /** The W3C `traceparent` header, when one came (the gateway sends the request's trace). */
  traceparent?: string;
}

export interface WhmcsSimulator {
  /** Base URL, e.g. `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** `${url}/includes/api.php`. */
  readonly apiUrl: string;
  readonly identifier: string;
  readonly secret: string;
  /** The live data, for assertions and for arranging test cases. */
  readonly state: SimulatorState;
  /** Every call received, in order (none when `recordCalls` is false). */
  readonly calls: RecordedCall[];
  /** Answer variants in force; assign to switch them while the simulator runs. */
  readonly quirks: SimulatorQuirks;
  inject(fault: WhmcsFault): void;
  clearFaults(): void;
  close(): Promise<void>;
}

interface Reply {
  status: number;
  contentType: string;
  body: string;
}

interface Runtime {
  state: SimulatorState;
  calls: RecordedCall[];
  recordCalls: boolean;
  faults: FaultPlan;
  access: AccessControl;
  latencyMs: number;
  quirks: SimulatorQuirks;
  /** Aborted on close, so pending delays end with the server. */
  shutdown: AbortSignal;
}

function jsonReply(status: number, body: ApiObject): Reply {
  return { status, contentType: 'application/json', body: encodePhpJson(body) };
}

function htmlReply(status: number, title: string, text: string): Reply {
  const body = `<!DOCTYPE html>\n<html><head><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>\n`;
  return { status, contentType: 'text/html; charset=utf-8', body };
}

/** The reply for the faults that end a call before the action runs. */
function faultReply(fault: OutcomeFault | undefined): Reply | undefined {
  switch (fault?.kind) {
    case 'http500':
      return htmlReply(500, 'Internal Server Error', 'The server encountered an internal error and was unable to complete your request.');
    case 'html':
      return htmlReply(200, 'Down for Maintenance', 'An upgrade is currently in progress. Please come back soon.');
    case 'forbidden':
      // Raised before the response-format middleware, like every access error.
      return jsonReply(403, failure(fault.message ?? 'Invalid IP 203.0.113.7'));
    default:
      return undefined;
  }
}

type ResponseFormat = 'json' | 'xml' | 'nvp';

/** Without `responsetype`, list actions answer XML and the others NVP; an unknown value is refused. */
function responseFormat(params: FormArray, isList: boolean): ResponseFormat | undefined {
  const requested = (scalarParam(params, 'responsetype') ?? '').toLowerCase();
  if (requested === '') return isList ? 'xml' : 'nvp';
  return requested === 'json' || requested === 'xml' || requested === 'nvp' ? requested : undefined;
}

function render(format: ResponseFormat, action: string, body: ApiObject, version: string): Reply {
  if (format === 'json') return jsonReply(200, body);
  if (format === 'xml') return { status: 200, contentType: 'application/xml; charset=utf-8', body: encodeXml(action, body, version) };
  return { status: 200, contentType: 'text/plain; charset=utf-8', body: encodeNvp(body) };
}

/** The WHMCS pipeline proper: access checks, then the action. */
function answer(runtime: Runtime, params: FormArray, action: string, ip: string): Reply {
  const denial = runtime.access.authenticate(params, ip);
  if (denial) return jsonReply(403, failure(denial));
  const definition = findAction(action);
  const version = runtime.state.settings.version;
  // The Authorization middleware, before the response format: an AccessDenied (HTTP 403) as for a
  // permission (WHMCS 8 Api/ApplicationSupport/Route/Middleware/Authorization.php).
  if (!definition) return jsonReply(403, failure(`Invalid API Action: "${action}" is not a valid API action`));
  const permission = runtime.access.authorize(action);
  if (permission) return jsonReply(403, failure(permission));
  const format = responseFormat(params, definition.list);
  if (!format) return jsonReply(200, failure(`Unsupported API response type format "${scalarParam(params, 'responsetype') ?? ''}"`));
  const body = definition.handler({ params: sanitizeInput(params), state: runtime.state, now: new Date(), quirks: runtime.quirks });
  return render(format, action, body, version);
}

async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(response: ServerResponse, reply: Reply): void {
  response.writeHead(reply.status, { 'content-type': reply.contentType, 'content-length': Buffer.byteLength(reply.body) });
  response.end(reply.body);
}

function remoteIp(request: IncomingMessage): string {
  return (request.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return ms > 0 ? sleep(ms, undefined, { signal }) : Promise.resolve();
}

async function handleRequest(runtime: Runtime, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://simulator.invalid');
  if (url.pathname !== API_PATH) return send(response, htmlReply(404, 'Not Found', 'The requested URL was not found on this server.'));
  if (request.method !== 'POST' && request.method !== 'GET') return send(response, htmlReply(405, 'Method Not Allowed', 'Use POST.'));
  const body = await readBody(request);
  if (body === undefined) return send(response, htmlReply(413, 'Request Entity Too Large', 'The request body is too large.'));

  // Like PHP's $_REQUEST: query parameters, overridden by the form body.
  const params = parsePhpForm(body, parsePhpForm(url.search.slice(1)));
  const action = normalizeActionName(scalarParam(params, 'action') ?? '');
  const { traceparent } = request.headers;
  if (runtime.recordCalls) runtime.calls.push(typeof traceparent === 'string' ? { action, params, traceparent } : { action, params });

  const { delayMs, outcome } = runtime.faults.takeFor(action);
  if (outcome?.kind === 'reset') return void request.socket.destroy();
  await pause(runtime.latencyMs + delayMs, runtime.shutdown);
  if (outcome?.kind === 'hang') return;
  const early = faultReply(outcome);
  if (early) return send(response, early);

  const reply = answer(runtime, params, action, remoteIp(request));
  if (outcome?.kind === 'stall_after_effect') await pause(outcome.ms, runtime.shutdown);
  if (outcome?.kind === 'malformed') reply.body = reply.body.slice(0, Math.floor(reply.body.length / 2));
  send(response, reply);
}

function validateOptions(options: WhmcsSimulatorOptions): void {
  const latency = options.latencyMs ?? 0;
  if (!Number.isFinite(latency) || latency < 0) throw new RangeError('latencyMs must be a non-negative number');
  const ban = options.banAfterFailures;
  if (ban !== undefined && (!Number.isInteger(ban) || ban < 1)) throw new RangeError('banAfterFailures must be a positive integer');
}

function initialState(seed: WhmcsSimulatorOptions['seed']): SimulatorState {
  if (seed === undefined) return createSeedState();
  return typeof seed === 'function' ? seed() : structuredClone(seed);
}

export async function startWhmcsSimulator(options: WhmcsSimulatorOptions = {}): Promise<WhmcsSimulator> {
  validateOptions(options);
  const host = options.host ?? '127.0.0.1';
  const identifier = options.identifier ?? randomBytes(16).toString('hex');
  const secret = options.secret ?? randomBytes(16).toString('hex');
  const shutdown = new AbortController();
  // Every answer waiting out its latency listens for the close: hundreds at once under load.
  setMaxListeners(0, shutdown.signal);
  const runtime: Runtime = {
    state: initialState(options.seed),
    calls: [],
    recordCalls: options.recordCalls ?? true,
    faults: new FaultPlan(),
    access: new AccessControl({ ...options, identifier, secret }),
    latencyMs: options.latencyMs ?? 0,
    quirks: { hideServiceCustomFields: false, ...options.quirks },
    shutdown: shutdown.signal,
  };

  const server = createServer((request, response) => {
    handleRequest(runtime, request, response).catch((error: unknown) => {
      // Closing aborts pending delays; anything else is a simulator bug, reported to the caller as a 500.
      if (shutdown.signal.aborted || response.headersSent) return void response.destroy();
      send(response, htmlReply(500, 'Simulator Error', String((error as Error).stack ?? error)));
    });
  });
  const listening = await listen(server, host, options.port ?? 0);
  const stopProgress = options.progress ? startProgress(runtime.state, options.progress) : () => undefined;
  const { url } = listening;

  return {
    url,
    apiUrl: `${url}${API_PATH}`,
    identifier,
    secret,
    state: runtime.state,
    calls: runtime.calls,
    quirks: runtime.quirks,
    inject: (fault) => runtime.faults.inject(fault),
    clearFaults: () => runtime.faults.clear(),
    close: async () => {
      stopProgress();
      shutdown.abort();
      await listening.close();
    },
  };
}
