/**
 * `npm run bench`: what the gateway costs per authenticated GET, next to two baselines measured in
 * the same run on the same machine (a bare Fastify route serving the same body, and one that does
 * one EVALSHA against the same Redis first), and how many Redis commands each request makes.
 *
 * A benchmark to run by hand, never a timed test: its numbers belong to the machine it ran on.
 * Env: BENCH_DURATION (seconds measured per target, default 10), BENCH_CONNECTIONS (default 32).
 */
import type { Server } from 'node:http';
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { startWhmcsSimulator, type WhmcsSimulator } from '../simulators/whmcs/server.js';
import { whmcsSimulatorConfig } from '../simulators/whmcs/sandbox.js';
import { buildApp } from '../src/app.js';
import { MemoryAuditLog } from '../src/audit.js';
import { parseConfig, type ResolvedConfig } from '../src/config.js';
import { KeyService } from '../src/keys/key-service.js';
import { createRedisStores } from '../src/stores/redis/index.js';
import { startRedisServer } from '../test/helpers/redis.js';
import { AUTOCANNON_VERSION, runLoad, type LoadResult } from './load.js';
import { countCommandsSent, describe, perRequest, readCommandStats, total, type CommandCounts } from './redis-commands.js';
import { BACKENDS } from '../mappings/index.js';

const DURATION_S = positiveIntFromEnv('BENCH_DURATION', 10);
const CONNECTIONS = positiveIntFromEnv('BENCH_CONNECTIONS', 32);
const WARMUP_S = 2;
/** Sequential requests per target while counting the commands ioredis sends. */
const PROBE_REQUESTS = 100;
const HOST = '127.0.0.1';
const PATH = '/v1/products';
const JSON_TYPE = 'application/json; charset=utf-8';
const PEPPER = 'bench-pepper-0123456789abcdef0123456789abcdef';
const INCR_SCRIPT = "return redis.call('INCR', KEYS[1])";
/** Far above what two cores can send, so that no request is refused. */
const UNREACHABLE_LIMITS = {
  keyPerMinute: 1_000_000_000,
  keyBurst: 1_000_000,
  keyPerDay: 1_000_000_000,
  accountPerMinute: 1_000_000_000,
  ipPerMinute: 1_000_000_000,
};

interface Target {
  label: string;
  url: string;
  requests: RequestCounter;
  isGateway: boolean;
}

interface Measurement {
  target: Target;
  load: LoadResult;
  /** INFO commandstats deltas per request (Lua-internal commands included). */
  commandsRun: CommandCounts;
  /** Commands ioredis wrote per request, from the sequential probe. */
  commandsSent: CommandCounts;
  upstreamCallsPerRequest: number;
}

function positiveIntFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[1-9]\d*$/.test(raw)) throw new Error(`${name} must be a positive whole number, got "${raw}"`);
  return Number(raw);
}

/**
 * Requests a server received and finished, counted at the HTTP server: exact, whatever autocannon
 * does with the requests in flight when its time is up.
 */
class RequestCounter {
  received = 0;
  private finished = 0;

  constructor(server: Server) {
    server.on('request', (_request, response) => {
      this.received += 1;
      response.once('close', () => (this.finished += 1));
    });
  }

  /** Resolves once every request received has been answered (or after 2 s). */
  async settled(): Promise<void> {
    const deadline = Date.now() + 2_000;
    while (this.finished < this.received && Date.now() < deadline) await sleep(10);
  }
}

async function listen(app: FastifyInstance): Promise<string> {
  return app.listen({ host: HOST, port: 0 });
}

async function buildGateway(simulator: WhmcsSimulator, redisUrl: string): Promise<{ app: FastifyInstance; key: string }> {
  const config = parseConfig({
    logLevel: 'warn',
    keys: { pepper: PEPPER },
    webhooks: { encryptionKey: Buffer.alloc(32, 7).toString('base64') },
    rateLimits: UNREACHABLE_LIMITS,
    upstream: {
      backend: 'whmcs',
      whmcs: whmcsSimulatorConfig(simulator),
    },
  }, BACKENDS) as ResolvedConfig;
  const stores = await createRedisStores({ url: redisUrl });
  // No credentials are read here; a memory audit log keeps the bench from writing under data/.
  const app = await buildApp(config, { stores, audit: new MemoryAuditLog(), backends: BACKENDS }).catch(async (error: unknown) => {
    await stores.close();
    throw error;
  });
  try {
    const keys = new KeyService(stores.keys, PEPPER);
    await keys.createAccount({ id: 'bench', name: 'Benchmark', upstreamId: '1' });
    const { key } = await keys.issue({ accountId: 'bench', name: 'bench', scopes: ['read:products'] });
    return { app, key };
  } catch (error) {
    await app.close();
    throw error;
  }
}

function buildBareBaseline(body: string): FastifyInstance {
  const app = Fastify();
  app.get(PATH, (_request, reply) => reply.header('content-type', JSON_TYPE).send(body));
  return app;
}

async function buildEvalshaBaseline(body: string, redis: Redis): Promise<FastifyInstance> {
  const sha = String(await redis.script('LOAD', INCR_SCRIPT));
  const app = Fastify();
  app.get(PATH, async (_request, reply) => {
    await redis.evalsha(sha, 1, 'bench:counter');
    return reply.header('content-type', JSON_TYPE).send(body);
  });
  return app;
}

async function fetchOk(url: string, headers: Record<string, string>): Promise<string> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${text}`);
  return text;
}

async function measure(
  target: Target,
  headers: Record<string, string>,
  admin: Redis,
  simulator: WhmcsSimulator,
): Promise<Measurement> {
  process.stdout.write(`  ${target.label}: warm-up ${WARMUP_S} s, measuring ${DURATION_S} s…\n`);
  await runLoad({ url: target.url, headers, connections: CONNECTIONS, durationS: WARMUP_S });
  await target.requests.settled();

  const statsBefore = await readCommandStats(admin);
  const receivedBefore = target.requests.received;
  const upstreamBefore = simulator.calls.length;
  const load = await runLoad({ url: target.url, headers, connections: CONNECTIONS, durationS: DURATION_S });
  await target.requests.settled();
  // Counted at the server, so the requests autocannon leaves in flight at its cut-off are included.
  const requests = target.requests.received - receivedBefore;
  const upstreamCallsPerRequest = requests > 0 ? (simulator.calls.length - upstreamBefore) / requests : 0;
  const commandsRun = perRequest(statsBefore, await readCommandStats(admin), requests);

  // One request first so that the probe sees the steady state (key lookup cached in process).
  await fetchOk(target.url, headers);
  const sent = await countCommandsSent(async () => {
    for (let index = 0; index < PROBE_REQUESTS; index += 1) await fetchOk(target.url, headers);
  });
  const commandsSent = perRequest(new Map(), sent, PROBE_REQUESTS);
  return { target, load, commandsRun, commandsSent, upstreamCallsPerRequest };
}

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function ratio(numerator: number, denominator: number): string {
  return denominator > 0 ? `${(numerator / denominator).toFixed(2)}×` : 'n/a';
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return rows
    .map((row) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join('  '))
    .join('\n');
}

function report(measurements: Measurement[], rss: { before: number; after: number }): void {
  const rows = [
    ['target', 'req/s', 'p50 ms', 'p99 ms', 'errors/non-2xx', 'redis cmds run/req', 'redis cmds sent/req', 'upstream calls/req'],
    ...measurements.map((m) => [
      m.target.label,
      m.load.requestsPerSecond.toFixed(0),
      String(m.load.p50Ms),
      String(m.load.p99Ms),
      `${m.load.errors}/${m.load.non2xx}`,
      total(m.commandsRun).toFixed(2),
      total(m.commandsSent).toFixed(2),
      m.upstreamCallsPerRequest.toFixed(4),
    ]),
  ];
  console.log(`\n${table(rows)}`);
  console.log('  redis cmds run/req: INFO commandstats deltas over the measured run / requests the server received;');
  console.log('    Redis counts the commands a Lua script runs too, so one EVALSHA of INCR counts 2.');
  console.log(`  redis cmds sent/req: commands ioredis wrote, i.e. round trips (${PROBE_REQUESTS} sequential requests after the run).`);
  console.log('  upstream calls/req: WHMCS calls; /v1/products is served from the mapping\'s cache, /v1/me reads');
  console.log('    upstream but the mapping coalesces identical concurrent reads, so under load it is below 1.\n');

  const [bare, evalsha] = measurements;
  if (bare && evalsha) {
    const ratioRows = [['ratio (same run)', 'req/s', 'p99']];
    for (const m of measurements.filter((each) => each.target.isGateway)) {
      for (const baseline of [bare, evalsha]) {
        ratioRows.push([
          `${m.target.label} / ${baseline.target.label}`,
          ratio(m.load.requestsPerSecond, baseline.load.requestsPerSecond),
          ratio(m.load.p99Ms, baseline.load.p99Ms),
        ]);
      }
    }
    console.log(`${table(ratioRows)}\n`);
  }

  console.log('Redis commands run per request (INFO commandstats over the measured run; includes commands run inside Lua scripts):');
  for (const m of measurements) console.log(`  ${m.target.label}: ${describe(m.commandsRun, 3)}`);
  console.log(`Redis commands sent per request = round trips (ioredis, ${PROBE_REQUESTS} sequential requests after the run; hget = key cache refresh):`);
  for (const m of measurements) console.log(`  ${m.target.label}: ${describe(m.commandsSent, 2)}`);
  const hotPath = measurements.find((m) => m.target.isGateway);
  if (hotPath) {
    console.log(`\nHot path, authenticated ${hotPath.target.label}: ${total(hotPath.commandsSent).toFixed(2)} Redis round trips per request (goal in standalone mode: 1).`);
  }
  console.log(`Bench process RSS (gateway, baselines and simulator share it): ${megabytes(rss.before)} before the gateway's load, ${megabytes(rss.after)} after (${rss.after >= rss.before ? '+' : ''}${megabytes(rss.after - rss.before)}).`);
}

async function main(): Promise<void> {
  const cpuList = cpus();
  console.log(`reseller-gateway benchmark: GET over keep-alive, ${CONNECTIONS} connections, ${WARMUP_S} s warm-up then ${DURATION_S} s measured per target`);
  console.log(`machine: ${cpuList.length} × ${cpuList[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}`);
  console.log(`load generator: autocannon ${AUTOCANNON_VERSION} CLI in a child process (own event loop); servers and WHMCS simulator: this process; redis-server: its own process`);
  console.log('(on a 2-core machine the load generator, the servers and Redis compete for the cores: compare the rows, not the absolute numbers)\n');

  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    const redis = await startRedisServer();
    cleanups.unshift(() => redis.stop());
    const simulator = await startWhmcsSimulator({ host: HOST });
    cleanups.unshift(() => simulator.close());
    const admin = new Redis(redis.url);
    const scriptClient = new Redis(redis.url);
    cleanups.unshift(() => Promise.all([admin.quit(), scriptClient.quit()]));

    const gateway = await buildGateway(simulator, redis.url);
    cleanups.unshift(() => gateway.app.close());
    const gatewayUrl = await listen(gateway.app);
    const headers = { authorization: `Bearer ${gateway.key}` };
    // The baselines serve the gateway's own answer, byte for byte (fetching it also fills the product cache).
    const body = await fetchOk(`${gatewayUrl}${PATH}`, headers);

    const bare = buildBareBaseline(body);
    cleanups.unshift(() => bare.close());
    const evalsha = await buildEvalshaBaseline(body, scriptClient);
    cleanups.unshift(() => evalsha.close());
    const targets: Target[] = [
      { label: 'bare Fastify', url: `${await listen(bare)}${PATH}`, requests: new RequestCounter(bare.server), isGateway: false },
      { label: 'one EVALSHA', url: `${await listen(evalsha)}${PATH}`, requests: new RequestCounter(evalsha.server), isGateway: false },
    ];
    const gatewayRequests = new RequestCounter(gateway.app.server);
    const gatewayTargets: Target[] = [
      { label: 'gateway GET /v1/products', url: `${gatewayUrl}${PATH}`, requests: gatewayRequests, isGateway: true },
      { label: 'gateway GET /v1/me', url: `${gatewayUrl}/v1/me`, requests: gatewayRequests, isGateway: true },
    ];
    console.log(`redis-server on port ${redis.port}; gateway at ${gatewayUrl}, stores in Redis, key lookups cached in process`);

    const measurements: Measurement[] = [];
    for (const target of targets) measurements.push(await measure(target, headers, admin, simulator));
    const rssBefore = process.memoryUsage().rss;
    for (const target of gatewayTargets) measurements.push(await measure(target, headers, admin, simulator));
    const rssAfter = process.memoryUsage().rss;
    report(measurements, { before: rssBefore, after: rssAfter });
  } finally {
    for (const cleanup of cleanups) await cleanup().catch((error: unknown) => console.error('cleanup failed:', error));
  }
}

// Bounds the whole run: four targets, each warm-up plus measured run plus process start-up and probe.
const budgetMs = 4 * (WARMUP_S + DURATION_S + 10) * 1_000 + 30_000;
const watchdog = setTimeout(() => {
  console.error(`bench: still running after ${budgetMs / 1_000} s; giving up`);
  process.exit(1);
}, budgetMs);
watchdog.unref();

try {
  await main();
} catch (error) {
  console.error(error);
  process.exitCode = 1;
}
