/**
 * The gateway in front of a slow upstream (the WHMCS simulator behind bench/replay-upstream.ts,
 * which answers after 200 ms, the invoice lists from recordings), at a constant 500 requests per
 * second (bench/constant-rate.ts, open loop):
 *
 * Each run is preceded by 3 s of the same load, not measured (connections, key copies; 1 s after
 * the first round, the JIT and the connections warm, the key copies read again). Before the
 * first, the gateway and the simulator get JIT_WARM_UP_S of every kind of request measured here, in
 * turn: at 500 requests/s V8 is still optimizing functions for the first 10-15 s (about 430
 * functions were first optimized during a measured run that followed 3 s of warm-up, about 110 in
 * the first phase after this warm-up, `--node-args=--trace-opt`), and that compilation, on the same
 * two cores, is not what a gateway in service pays.
 *
 * - added latency: `GET /v1/billing/invoices?page=N&per_page=M`, one GetInvoices call each, against
 *   the same GetInvoices calls sent to the upstream directly, with the same rate and schedule;
 *   no call is repeated while its twin is in flight (nothing is coalesced). Twice: pages past the
 *   last row (the gateway's own path, what earlier rounds measured), then pages of 20-29 rows (the
 *   simulator's two customers hold 250 invoices each; 160 different calls in turn);
 * - the floor of each added latency: the same calls through bare Fastify relaying them to the same
 *   upstream (bench/relay-server.ts: undici, JSON.parse, JSON.stringify; given the same JIT
 *   warm-up and node options as the gateway), each right after the gateway's run;
 * - the catalog once warm: `GET /v1/products` (served from the mapping's cache, refreshed in the
 *   background when stale);
 * - the floor: the same catalog requests against bare Fastify answering the catalog's bytes.
 *
 * All eight runs in turn, in rounds: a figure is the median of its rounds, an added latency the
 * median of each round's own difference, between two runs seconds apart (bench/gateway-report.ts
 * says why).
 *
 * The gateway's upstream pool is sized for the load (`connections: 256`): at 500 requests per
 * second of 200 ms each, 100 are in flight.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { createSeedState } from '../simulators/whmcs/fixtures.js';
import type { SimulatorState, WhmcsSimulator } from '../simulators/whmcs/server.js';
import { startWhmcsSimulator } from '../simulators/whmcs/server.js';
import { whmcsSimulatorConfig } from '../simulators/whmcs/sandbox.js';
import { createRedisStores } from '../src/stores/redis/index.js';
import { watchGateway } from './gateway-metrics.js';
import { FORM_TYPE, GET_INVOICES_PATH, getInvoicesForm } from './get-invoices.js';
import { startReplayUpstream } from './replay-upstream.js';
import { freePort, productionNodeArgs, startBaselineServer, startServer, treeCpuSeconds, writeGatewayConfig, type Server } from './processes.js';
import { report, type RateResult, type Round, type Watched, type WithCpu } from './slow-backend-report.js';
import { fetchBody, issueKeys, keyHeaders, windowFor, type IssuedKey, type LoadShape } from './shape.js';

export const RATE = 500;
export const LATENCY_MS = 200;
const SHAPE: LoadShape = { idPrefix: 'slow', keys: 200, accounts: 20, sourceAddresses: 20 };
/** Invoices per customer, and the pages read: page × per page × customer, 160 different calls. */
const INVOICES_PER_CUSTOMER = 250;
const PAGES = 8;
const PER_PAGE_FROM = 20;
const PER_PAGE_SIZES = 10;
const WARM_UP_S = 3;
const LATER_WARM_UP_S = 1;
const JIT_WARM_UP_S = 15;

export interface SlowBackendOptions {
  directory: string;
  /** Seconds measured per run and round. */
  durationS: number;
  /** Rounds of every run in turn (figures: the rounds' medians; added latency: each round's own difference). */
  rounds: number;
  pepper: string;
  webhookKey: string;
  redisUrl: string;
  admin: Redis;
  /** More node options for the gateway. */
  nodeArgs: string[];
}

export type RateRequest = { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string };

/** A run's load; `warmUpS` of it before the measured run (WARM_UP_S unless given). */
type RateInput = { origin: string; durationS: number; connections: number; requests: RateRequest[]; warmUpS?: number };

/**
 * Warm-up (its connections opened, the gateway's key copies read, its JIT done), then the measured
 * run; a server process given adds its CPU time over that run, its ops listener (`opsUrl`) its garbage collections.
 */
async function runConstantRate(directory: string, input: RateInput): Promise<RateResult>;
async function runConstantRate(directory: string, input: RateInput, server: { pid: number; opsUrl: string }): Promise<Watched>;
async function runConstantRate(directory: string, input: RateInput, server: { pid: number }): Promise<WithCpu>;
async function runConstantRate(
  directory: string,
  input: RateInput,
  server?: { pid: number; opsUrl?: string },
): Promise<RateResult | WithCpu | Watched> {
  await runOnce(directory, { ...input, durationS: input.warmUpS ?? WARM_UP_S });
  if (server === undefined) return runOnce(directory, input);
  const watch = server.opsUrl === undefined ? undefined : await watchGateway(server.opsUrl);
  const cpuBefore = treeCpuSeconds(server.pid);
  const result = await runOnce(directory, input);
  const cpuUs = ((treeCpuSeconds(server.pid) - cpuBefore) * 1e6) / result.requests;
  return watch === undefined ? { ...result, cpuUs } : { ...result, ...(await watch.stop()), cpuUs };
}

export function runOnce(directory: string, input: RateInput): Promise<RateResult> {
  const file = join(directory, 'constant-rate.json');
  writeFileSync(file, JSON.stringify({ ...input, rate: RATE }));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/constant-rate.ts', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // The loader ends by itself within its duration and its requests' timeout; past that, it is stuck.
    const limit = setTimeout(() => child.kill('SIGKILL'), (input.durationS + 60) * 1_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(limit);
      const line = output.split('\n').find((each) => each.startsWith('RATE_JSON '));
      if (code !== 0 || !line) return reject(new Error(`constant-rate loader exited with ${code}:\n${output}`));
      resolve(JSON.parse(line.slice('RATE_JSON '.length)) as RateResult);
    });
  });
}

/**
 * Bare Fastify answering the catalog's bytes: the same catalog requests, loader and schedule
 * against it measure what the loader and the machine add to any server's latency at this rate.
 */
async function startFloor(options: SlowBackendOptions, gatewayUrl: string, requests: RateRequest[]): Promise<Server> {
  const [first] = requests as [RateRequest];
  const body = await fetchBody(`${gatewayUrl}${first.path}`, first.headers);
  const bodiesFile = join(options.directory, 'slow-bodies.json');
  writeFileSync(bodiesFile, JSON.stringify({ [first.path]: body }));
  return startBaselineServer({ name: 'bare Fastify baseline (slow backend)', bodiesFile, readyPath: first.path, logFile: join(options.directory, 'slow-baseline.log') });
}

/**
 * Bare Fastify relaying the invoice pages to the same upstream (bench/relay-server.ts): the floor
 * of each added latency. Checked once to answer a page of rows, as the gateway does.
 */
async function startRelay(options: SlowBackendOptions, upstreamUrl: string, simulator: WhmcsSimulator): Promise<Server> {
  const port = await freePort();
  const relay = await startServer({
    name: 'bare Fastify relay (slow backend)',
    // The image's node options, as the gateway's: the same young generation.
    args: [...productionNodeArgs(), '--import', 'tsx', 'bench/relay-server.ts'],
    env: { RELAY_PORT: String(port), RELAY_UPSTREAM: upstreamUrl, RELAY_IDENTIFIER: simulator.identifier, RELAY_SECRET: simulator.secret, NODE_ENV: 'production' },
    port,
    readyPath: '/ready',
    logFile: join(options.directory, 'slow-relay.log'),
  });
  const page = JSON.parse(await fetchBody(`${relay.url}/invoices?userid=1&page=1&per_page=${PER_PAGE_FROM}`, {})) as { data: unknown[] };
  if (page.data.length !== PER_PAGE_FROM) {
    await relay.stop();
    throw new Error(`the relay answered ${page.data.length} invoices for a page of ${PER_PAGE_FROM}`);
  }
  return relay;
}

/** The simulator's seed, its two customers' invoices copied to INVOICES_PER_CUSTOMER each. */
export function seedWithInvoices(): SimulatorState {
  const state = createSeedState();
  const invoices = [];
  let id = 0;
  for (const clientId of [1, 2]) {
    const own = state.invoices.filter((invoice) => invoice.clientId === clientId);
    for (let index = 0; index < INVOICES_PER_CUSTOMER; index += 1) {
      id += 1;
      invoices.push({ ...structuredClone(own[index % own.length] as (typeof own)[number]), id, invoicenum: `B${id}` });
    }
  }
  return { ...state, invoices };
}

export type PageCall = { page: number; perPage: number };

/** One of each list in turn, as long as the shortest. */
function interleave<T>(lists: T[][]): T[] {
  const length = Math.min(...lists.map((list) => list.length));
  return Array.from({ length: length * lists.length }, (_, index) => (lists[index % lists.length] as T[])[Math.floor(index / lists.length)] as T);
}

/** The calls in turn with rows: every page and page size, each for both customers (keys alternate between them). */
export function pagesWithRows(): PageCall[] {
  const calls = [];
  for (let size = 0; size < PER_PAGE_SIZES; size += 1) {
    for (let page = 1; page <= PAGES; page += 1) calls.push({ page, perPage: PER_PAGE_FROM + size }, { page, perPage: PER_PAGE_FROM + size });
  }
  return calls;
}

/** Pages past the last row (25 a page), each once in a run: an empty list each. */
export function pagesPastTheEnd(): PageCall[] {
  const first = Math.ceil(INVOICES_PER_CUSTOMER / 25) + 1;
  return Array.from({ length: 10_000 }, (_, index) => ({ page: first + index, perPage: 25 }));
}

const keyFor = (keys: IssuedKey[], index: number): IssuedKey => keys[index % keys.length] as IssuedKey;

/** The gateway's invoice pages for these calls, request i with key i. */
export function invoicePages(keys: IssuedKey[], pages: PageCall[]): RateRequest[] {
  return pages.map(({ page, perPage }, index) => ({ method: 'GET', path: `/v1/billing/invoices?page=${page}&per_page=${perPage}`, headers: keyHeaders(keyFor(keys, index)) }));
}

/**
 * The gateway as in production (dist/, the Dockerfile's node options and `nodeArgs`, Redis stores)
 * in front of `upstreamUrl`, its pool sized for the load, and the keys issued for it.
 */
export async function startInvoiceGateway(
  options: Pick<SlowBackendOptions, 'directory' | 'pepper' | 'webhookKey' | 'redisUrl'>,
  simulator: WhmcsSimulator,
  upstreamUrl: string,
  nodeArgs: string[],
): Promise<{ gateway: Server; keys: IssuedKey[]; opsUrl: string }> {
  const stores = await createRedisStores({ url: options.redisUrl });
  const keys = await issueKeys(stores.keys, options.pepper, SHAPE, ['read:products', 'read:billing']).finally(() => stores.close());
  const port = await freePort();
  const opsPort = await freePort();
  const opsUrl = `http://127.0.0.1:${opsPort}`;
  const configFile = writeGatewayConfig(join(options.directory, 'slow-gateway.json'), {
    port,
    redisUrl: options.redisUrl,
    windowMs: windowFor(SHAPE, RATE, 0.5),
    auditFile: join(options.directory, 'slow-audit.log'),
    whmcs: { ...whmcsSimulatorConfig(simulator), url: upstreamUrl, connections: 256 },
  });
  const gateway = await startServer({
    name: 'gateway (slow backend)',
    args: [...productionNodeArgs(), ...nodeArgs, 'dist/bin/gateway.js'],
    env: {
      CONFIG_FILE: configFile,
      KEY_PEPPER: options.pepper,
      WEBHOOK_ENCRYPTION_KEY: options.webhookKey,
      OPS_PORT: String(opsPort),
      WORKERS: '1',
      NODE_ENV: 'production',
    },
    port,
    readyPath: '/v1/health',
    logFile: join(options.directory, 'slow-gateway.log'),
  });
  return { gateway, keys, opsUrl };
}

export async function runSlowBackend(options: SlowBackendOptions): Promise<void> {
  const rounds = options.rounds === 1 ? '' : `, in ${options.rounds} rounds of every run in turn`;
  console.log(`\nSlow backend: the upstream answers after ${LATENCY_MS} ms (invoice lists from recordings: bench/replay-upstream.ts); ${RATE} requests/s, constant rate, ${options.durationS} s each${rounds}, after ${JIT_WARM_UP_S} s of JIT warm-up`);
  const simulator = await startWhmcsSimulator({ host: '127.0.0.1', seed: seedWithInvoices, recordCalls: false });
  // The latency is the replay's, which answers the invoice lists from recordings (replay-upstream.ts).
  const upstream = await startReplayUpstream({ simulatorUrl: simulator.url, latencyMs: LATENCY_MS, replays: (action) => action === 'GetInvoices' });
  try {
    const { gateway, keys, opsUrl } = await startInvoiceGateway(options, simulator, upstream.url, options.nodeArgs);
    try {
      // Request i goes out with key i, whose account maps to customer 1 or 2 (shape.ts: by account index).
      const customerOf = (index: number) => String((Number(keyFor(keys, index).accountId.split('-').at(-1)) % 2) + 1);
      const connections = 256;
      const measured = { opsUrl, pid: gateway.pid };
      const gatewayPages = (pages: PageCall[]) => invoicePages(keys, pages);
      let warmUpS = WARM_UP_S;
      const run = (origin: string, requests: RateRequest[]): RateInput => ({ origin, durationS: options.durationS, connections, requests, warmUpS });
      const direct = (pages: PageCall[]) =>
        runConstantRate(options.directory, run(upstream.url, pages.map(({ page, perPage }, index) => ({ method: 'POST', path: GET_INVOICES_PATH, headers: { 'content-type': FORM_TYPE }, body: getInvoicesForm(simulator, customerOf(index), page, perPage) }))));
      const viaGateway = (pages: PageCall[]) => runConstantRate(options.directory, run(gateway.url, gatewayPages(pages)), measured);
      const catalogRequests = keys.map((key) => ({ method: 'GET' as const, path: '/v1/products', headers: keyHeaders(key) }));
      const relayPages = (pages: PageCall[]): RateRequest[] =>
        pages.map(({ page, perPage }, index) => ({ method: 'GET', path: `/invoices?userid=${customerOf(index)}&page=${page}&per_page=${perPage}`, headers: {} }));
      const floor = await startFloor(options, gateway.url, catalogRequests);
      const relay = await startRelay(options, upstream.url, simulator).catch(async (error: unknown) => {
        await floor.stop();
        throw error;
      });
      const viaRelay = (pages: PageCall[]) => runConstantRate(options.directory, run(relay.url, relayPages(pages)), { pid: relay.pid });
      try {
        await runOnce(options.directory, { origin: gateway.url, durationS: JIT_WARM_UP_S, connections, requests: interleave([gatewayPages(pagesPastTheEnd().slice(0, 160)), gatewayPages(pagesWithRows()), catalogRequests.slice(0, 160)]) });
        await runOnce(options.directory, { origin: relay.url, durationS: JIT_WARM_UP_S, connections, requests: interleave([relayPages(pagesPastTheEnd().slice(0, 160)), relayPages(pagesWithRows())]) });
        const results: Round[] = [];
        for (let round = 1; round <= options.rounds; round += 1) {
          if (options.rounds > 1) process.stdout.write(`  round ${round}/${options.rounds}…\n`);
          results.push({
            emptyDirect: await direct(pagesPastTheEnd()),
            emptyViaGateway: await viaGateway(pagesPastTheEnd()),
            emptyViaRelay: await viaRelay(pagesPastTheEnd()),
            rowsDirect: await direct(pagesWithRows()),
            rowsViaGateway: await viaGateway(pagesWithRows()),
            rowsViaRelay: await viaRelay(pagesWithRows()),
            catalog: await runConstantRate(options.directory, { ...run(gateway.url, catalogRequests), connections: 64 }, measured),
            floor: await runConstantRate(options.directory, { ...run(floor.url, catalogRequests), connections: 64 }, { pid: floor.pid }),
          });
          warmUpS = LATER_WARM_UP_S;
        }
        report(results, options.durationS, RATE);
      } finally {
        await Promise.all([floor.stop(), relay.stop()]);
      }
      console.log(`(the upstream: ${upstream.counts.replayed} calls answered from recordings, ${upstream.counts.forwarded} forwarded to the simulator)`);
    } finally {
      await gateway.stop();
    }
  } finally {
    await upstream.close();
    await simulator.close();
  }
}
