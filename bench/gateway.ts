/**
 * `npm run bench`: what the gateway costs per authenticated GET, next to baselines measured in the
 * same run (Fastify answering the same bytes, pre-serialised; the same after one EVALSHA, each its
 * own write to Redis; the same with the writes batched per turn of the event loop, as the
 * gateway's are), and what Redis does for it. See README "Benchmark" for how to read the output.
 *
 * Every server is its own process: the gateway compiled and started as in production (Redis stores,
 * metrics on, log level info into a file), the baselines, a private redis-server; the WHMCS
 * simulator runs in this process. Load: wrk, one thread, keep-alive connections on loopback,
 * cycling through one request per key (thousands of keys, hundreds of accounts and source
 * addresses via X-Forwarded-For from the trusted loopback proxy; see shape.ts).
 *
 * A benchmark to run by hand, never a timed test: its numbers belong to the machine it ran on.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { startWhmcsSimulator } from '../simulators/whmcs/server.js';
import { whmcsSimulatorConfig } from '../simulators/whmcs/sandbox.js';
import { createRedisStores } from '../src/stores/redis/index.js';
import { startRedisServer } from '../test/helpers/redis.js';
import { countGc, describeGc, type GcTally } from './gateway-metrics.js';
import { ensureBuilt, freePort, productionNodeArgs, sampleRss, startBaselineServer, startServer, treeCpuSeconds, type Server, writeGatewayConfig } from './processes.js';
import { costOf, describeCalls, roundTrips, snapshot, type RedisCost } from './redis-stats.js';
import { megabytes, ms, ratio, table } from './report.js';
import { clearCounters, DEFAULT_SHAPE, fetchBody, issueKeys, keyHeaders, requestsFor, windowFor, type IssuedKey } from './shape.js';
import { runSlowBackend } from './slow-backend.js';
import { findWrk, runWrk, writeWrkScript, type WrkResult } from './wrk.js';

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: process.env.BENCH_DURATION ?? '8' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: process.env.BENCH_CONNECTIONS ?? '50' },
    workers: { type: 'string', default: '1,2' },
    'no-slow': { type: 'boolean', default: false },
    'slow-only': { type: 'boolean', default: false },
    'no-baselines': { type: 'boolean', default: false },
    window: { type: 'string' },
    paths: { type: 'string', default: '/v1/products,/v1/me' },
    'cpu-prof': { type: 'string' },
    'node-args': { type: 'string', default: '' },
    keep: { type: 'boolean', default: false },
    'log-level': { type: 'string', default: 'info' },
    help: { type: 'boolean', default: false },
  },
});
if (flags.help) {
  process.stdout.write(`npm run bench [-- options]
  --duration S      seconds measured per target (default 8; env BENCH_DURATION)
  --warmup S        seconds of warm-up before each (default 2)
  --connections N   wrk connections (default 50; env BENCH_CONNECTIONS)
  --workers LIST    WORKERS values to run the gateway's /v1/products with (default 1,2)
  --no-slow         skip the slow-backend part
  --slow-only       run the slow-backend part only
  --no-baselines    measure the gateway only (the window then comes from --window, default 1000 ms)
  --window MS       the limits' window instead of the one sized from the bare baseline's rate
  --paths LIST      the gateway paths measured (default /v1/products,/v1/me)
  --cpu-prof DIR    run the (WORKERS=1) gateway with node --cpu-prof, profiles into DIR
  --node-args ARGS  node options for the measured gateway after the Dockerfile CMD's (e.g. "--heap-prof --heap-prof-dir /tmp/h")
  --keep            keep the working directory (configs, gateway logs, wrk scripts)
  --log-level L     the gateway's log level (default info, as in production)
`);
  process.exit(0);
}
const DURATION_S = positiveInt('duration', flags.duration);
const WARMUP_S = positiveInt('warmup', flags.warmup);
const CONNECTIONS = positiveInt('connections', flags.connections);
const WORKER_COUNTS = flags.workers.split(',').map((each) => positiveInt('workers', each));
const PEPPER = 'bench-pepper-0123456789abcdef0123456789abcdef';
const WEBHOOK_KEY = Buffer.alloc(32, 7).toString('base64');
const KEY_PREFIX = 'rg:';
/** The account limit's share the load takes, at the bare baseline's rate (the gateway's is lower). */
const LIMIT_SHARE = 0.6;
const PATHS = flags.paths.split(',');
const PROBE_REQUESTS = 100;
/**
 * The issue's two baselines, and a third: one EVALSHA with its writes batched per turn of the
 * event loop, as the gateway's Redis connection does (src/stores/redis/connection.ts).
 */
const BATCHED = 'one EVALSHA batched';
const BASELINES = ['bare Fastify', 'one EVALSHA', BATCHED] as const;
type Baseline = (typeof BASELINES)[number];

function positiveInt(name: string, raw: string): number {
  if (!/^[1-9]\d*$/.test(raw)) throw new Error(`--${name} must be a positive whole number, got "${raw}"`);
  return Number(raw);
}

interface Measurement {
  label: string;
  path: string;
  load: WrkResult;
  redis: RedisCost;
  /** CPU time of the server's processes per request, µs. */
  cpuUs: number;
  rss: { first: number; last: number; max: number };
  /** The gateway's garbage collections over the measured run (one process: WORKERS=1). */
  gc?: GcTally;
}

interface Context {
  wrk: string;
  directory: string;
  keys: IssuedKey[];
  admin: Redis;
}

/**
 * Passes over the keys a warm-up makes at least, so that the measured run meets the steady state:
 * every key's copy held by the process that serves it (its first use costs a key lookup and two
 * decisions). Connections fall on workers as they come, so with several, enough passes that a key
 * has reached each worker with 99 % odds.
 */
function warmUpPasses(workers: number): number {
  return workers === 1 ? 1 : Math.ceil(Math.log(0.01) / Math.log(1 - 1 / workers));
}

async function measure(context: Context, label: string, server: Server & { opsUrl?: string }, path: string, workers = 1): Promise<Measurement> {
  process.stdout.write(`  ${label}: warm-up ${WARMUP_S} s, measuring ${DURATION_S} s…\n`);
  const script = writeWrkScript(context.directory, `${label.replace(/\W+/g, '-')}`, new URL(server.url).host, requestsFor(path, context.keys));
  // Each wrk run starts again at the first key: on a host too slow to go round them all in the
  // warm-up, one more run, at most twice as long as the last (a cold process is slower than it
  // will be), until one has.
  const needed = warmUpPasses(workers) * context.keys.length;
  let durationS = WARMUP_S;
  let warm = await runWrk(context.wrk, { url: server.url, script, connections: CONNECTIONS, durationS });
  while (warm.requests < needed) {
    if (warm.requests === 0) throw new Error(`${label}: no request answered in the warm-up`);
    durationS = Math.min(2 * durationS, Math.ceil((1.2 * needed) / warm.requestsPerSecond));
    process.stdout.write(`    (${warm.requests} requests in the last warm-up, ${needed} needed to use every key: ${durationS} s more)\n`);
    warm = await runWrk(context.wrk, { url: server.url, script, connections: CONNECTIONS, durationS });
  }
  const before = await snapshot(context.admin);
  const gcCount = server.opsUrl === undefined ? undefined : await countGc(server.opsUrl);
  const cpuBefore = treeCpuSeconds(server.pid);
  const rss = sampleRss(server.pid);
  const load = await runWrk(context.wrk, { url: server.url, script, connections: CONNECTIONS, durationS: DURATION_S });
  const samples = rss.stop().map((sample) => sample.rss);
  const cpuUs = ((treeCpuSeconds(server.pid) - cpuBefore) * 1e6) / load.requests;
  const redis = costOf(before, await snapshot(context.admin), load.requests);
  const gc = await gcCount?.stop();
  return { label, path, load, redis, cpuUs, rss: { first: samples[0] ?? 0, last: samples[samples.length - 1] ?? 0, max: Math.max(...samples) }, gc };
}

async function main(): Promise<void> {
  const cpuList = cpus();
  console.log(`reseller-gateway benchmark: wrk -t1 -c${CONNECTIONS}, ${WARMUP_S} s warm-up + ${DURATION_S} s per target, loopback`);
  console.log(`machine: ${cpuList.length} × ${cpuList[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}`);
  console.log('(load generator, servers and Redis share these cores: compare rows and ratios of one run, not absolute numbers)\n');
  ensureBuilt();
  const wrk = findWrk();
  const directory = mkdtempSync(join(tmpdir(), 'rg-bench-'));
  const cleanups: Array<() => Promise<unknown>> = [
    async () => (flags.keep ? console.log(`kept ${directory}`) : rmSync(directory, { recursive: true, force: true })),
  ];
  try {
    const redis = await startRedisServer();
    cleanups.unshift(() => redis.stop());
    const simulator = await startWhmcsSimulator({ host: '127.0.0.1', recordCalls: false });
    cleanups.unshift(() => simulator.close());
    const admin = new Redis(redis.url);
    cleanups.unshift(async () => admin.disconnect());

    // The gateway's own key prefix (the stores' default).
    if (flags['slow-only']) {
      await runSlowBackend({ directory, durationS: DURATION_S, pepper: PEPPER, webhookKey: WEBHOOK_KEY, redisUrl: redis.url, admin, nodeArgs: flags['node-args'].split(' ').filter(Boolean) });
      return;
    }
    const stores = await createRedisStores({ url: redis.url });
    const keys = await issueKeys(stores.keys, PEPPER, DEFAULT_SHAPE, ['read:products', 'read:orders', 'read:services']).finally(() => stores.close());
    console.log(`shape: ${DEFAULT_SHAPE.keys} keys over ${DEFAULT_SHAPE.accounts} accounts, from ${DEFAULT_SHAPE.sourceAddresses} source addresses (X-Forwarded-For), round-robin; redis-server on port ${redis.port}`);
    const context: Context = { wrk, directory, keys, admin };

    const gatewayPort = await freePort();
    const startGateway = async (windowMs: number, workers: number, profileDirectory?: string, measured = true): Promise<Server & { opsUrl?: string }> => {
      const configFile = writeGatewayConfig(join(directory, 'gateway.json'), {
        port: gatewayPort,
        logLevel: flags['log-level'],
        redisUrl: redis.url,
        windowMs,
        auditFile: join(directory, 'audit.log'),
        whmcs: whmcsSimulatorConfig(simulator),
      });
      const opsPort = await freePort();
      const server = await startServer({
        name: 'gateway',
        args: [
          ...productionNodeArgs(),
          ...(profileDirectory ? ['--cpu-prof', '--cpu-prof-dir', profileDirectory] : []),
          ...(measured ? flags['node-args'].split(' ').filter(Boolean) : []),
          'dist/bin/gateway.js',
        ],
        env: {
          CONFIG_FILE: configFile,
          KEY_PEPPER: PEPPER,
          WEBHOOK_ENCRYPTION_KEY: WEBHOOK_KEY,
          OPS_PORT: String(opsPort),
          WORKERS: String(workers),
          NODE_ENV: 'production',
        },
        port: gatewayPort,
        readyPath: '/v1/health',
        logFile: join(directory, 'gateway.log'),
      });
      // Several workers' collections are their own: counted for one process only.
      return workers === 1 ? { ...server, opsUrl: `http://127.0.0.1:${opsPort}` } : server;
    };

    // The baselines answer the gateway's own bytes: take them from a gateway first.
    const first = await startGateway(60_000, 1, undefined, false);
    const bodies = Object.fromEntries(await Promise.all(PATHS.map(async (path) => [path, await fetchBody(`${first.url}${path}`, keyHeaders(keys[0] as IssuedKey))])));
    await first.stop();
    const bodiesFile = join(directory, 'bodies.json');
    writeFileSync(bodiesFile, JSON.stringify(bodies));
    const sizes = Object.entries(bodies).map(([path, body]) => `${path} ${Buffer.byteLength(String(body))} bytes`);
    console.log(`bodies: ${sizes.join(', ')} (the baselines send these bytes, serialised once)\n`);

    const startBaseline = (baseline: Baseline): Promise<Server> =>
      startBaselineServer({
        name: `${baseline} baseline`,
        bodiesFile,
        redisUrl: baseline === 'bare Fastify' ? undefined : redis.url,
        batch: baseline === BATCHED,
        readyPath: PATHS[0] ?? '/v1/products',
        logFile: join(directory, 'baseline.log'),
      });

    const results: Measurement[] = [];
    for (const baseline of flags['no-baselines'] ? [] : BASELINES) {
      const server = await startBaseline(baseline);
      for (const path of PATHS) results.push(await measure(context, `${baseline} ${path}`, server, path));
      await server.stop();
    }

    const bareRate = results[0]?.load.requestsPerSecond;
    const windowMs = flags.window ? positiveInt('window', flags.window) : bareRate ? windowFor(DEFAULT_SHAPE, bareRate, LIMIT_SHARE) : 1_000;
    console.log(
      `\nlimits: contract defaults per window, the window ${windowMs} ms` +
        (bareRate && !flags.window ? `: at the bare baseline's rate the load would take ${LIMIT_SHARE * 100}% of every account's limit` : ''),
    );
    const scaling: Measurement[] = [];
    let trips = new Map<string, number>();
    for (const workers of WORKER_COUNTS) {
      await clearCounters(admin, KEY_PREFIX);
      const gateway = await startGateway(windowMs, workers, workers === 1 ? flags['cpu-prof'] : undefined);
      try {
        if (workers === WORKER_COUNTS[0]) {
          for (const path of PATHS) results.push(await measure(context, `gateway ${path}`, gateway, path));
          const products = results.find((m) => m.label === 'gateway /v1/products');
          if (products) scaling.push(products);
          // Keys just used (their copies fresh), then the same keys again, counted.
          const probe = async (): Promise<void> => {
            for (let index = 0; index < PROBE_REQUESTS; index += 1) await fetchBody(`${gateway.url}/v1/products`, keyHeaders(keys[index] as IssuedKey));
          };
          await probe();
          trips = await roundTrips(admin, PROBE_REQUESTS, probe);
        } else {
          scaling.push(await measure(context, `gateway WORKERS=${workers} /v1/products`, gateway, '/v1/products', workers));
        }
      } finally {
        const code = await gateway.stop();
        if (code !== 0) console.log(`  (gateway WORKERS=${workers} exited ${code} at SIGTERM)`);
      }
    }

    report(results, scaling, trips, windowMs);
    if (!flags['no-slow']) await runSlowBackend({ directory, durationS: DURATION_S, pepper: PEPPER, webhookKey: WEBHOOK_KEY, redisUrl: redis.url, admin, nodeArgs: flags['node-args'].split(' ').filter(Boolean) });
  } finally {
    for (const cleanup of cleanups) await cleanup().catch((error: unknown) => console.error('cleanup failed:', error));
  }
}

function report(results: Measurement[], scaling: Measurement[], trips: Map<string, number>, windowMs: number): void {
  const rows = [
    ['target', 'req/s', 'p50 ms', 'p99 ms', 'errors', '4xx/5xx', 'server CPU µs/req', 'Redis script µs/req', 'Redis CPU µs/req', 'RSS max'],
    ...[...results, ...scaling.slice(1)].map((m) => [
      m.label,
      m.load.requestsPerSecond.toFixed(0),
      ms(m.load.p50Ms),
      ms(m.load.p99Ms),
      String(m.load.errors),
      String(m.load.non2xx),
      m.cpuUs.toFixed(1),
      m.redis.scriptUsPerRequest.toFixed(2),
      m.redis.cpuUsPerRequest.toFixed(2),
      megabytes(m.rss.max),
    ]),
  ];
  console.log(`\n${table(rows)}\n`);

  const ratioRows = [['ratio (same run)', 'req/s', 'p99', 'target']];
  for (const path of PATHS) {
    const gateway = results.find((m) => m.label === `gateway ${path}`);
    const bare = results.find((m) => m.label === `bare Fastify ${path}`);
    const evalsha = results.find((m) => m.label === `one EVALSHA ${path}`);
    const batched = results.find((m) => m.label === `${BATCHED} ${path}`);
    if (!gateway || !bare || !evalsha || !batched) continue;
    const goals = path === '/v1/products' ? ['≥ 0.50× req/s', '≥ 0.80× req/s, p99 ≤ 2.00×'] : ['', ''];
    ratioRows.push([`gateway ${path} / bare Fastify`, ratio(gateway.load.requestsPerSecond, bare.load.requestsPerSecond), ratio(gateway.load.p99Ms, bare.load.p99Ms), goals[0] ?? '']);
    ratioRows.push([`gateway ${path} / one EVALSHA`, ratio(gateway.load.requestsPerSecond, evalsha.load.requestsPerSecond), ratio(gateway.load.p99Ms, evalsha.load.p99Ms), goals[1] ?? '']);
    ratioRows.push([`gateway ${path} / ${BATCHED}`, ratio(gateway.load.requestsPerSecond, batched.load.requestsPerSecond), ratio(gateway.load.p99Ms, batched.load.p99Ms), '']);
  }
  const single = scaling[0];
  for (const m of scaling.slice(1)) {
    if (single) ratioRows.push([`${m.label} / WORKERS=${WORKER_COUNTS[0]}`, ratio(m.load.requestsPerSecond, single.load.requestsPerSecond), ratio(m.load.p99Ms, single.load.p99Ms), '']);
  }
  console.log(`${table(ratioRows)}\n`);

  console.log('Redis per request (INFO commandstats over the measured run; a script\'s own commands counted too):');
  for (const m of results) console.log(`  ${m.label}: ${describeCalls(m.redis.callsPerRequest)}`);
  console.log(`Redis round trips per authenticated GET /v1/products (MONITOR, ${PROBE_REQUESTS} sequential requests, keys cached): ${describeCalls(trips)} (goal: exactly 1 evalsha)`);
  const products = results.find((m) => m.label === 'gateway /v1/products');
  if (products) {
    console.log(`Redis: rate-limit decision ${products.redis.scriptUsPerRequest.toFixed(2)} µs of script time per request (goal ≤ 10), the server's whole CPU ${products.redis.cpuUsPerRequest.toFixed(2)} µs per request (network included)`);
  }
  for (const m of results) if (m.gc) console.log(`Gateway garbage collection, ${m.label.replace(/^gateway /, '')} (measured run): ${describeGc(m.gc, DURATION_S)}`);
  console.log(`Gateway RSS (all its processes): ${[...results, ...scaling.slice(1)].filter((m) => m.label.startsWith('gateway')).map((m) => `${m.label} ${megabytes(m.rss.first)} → ${megabytes(m.rss.last)}`).join('; ')}`);
  console.log(`(window ${windowMs} ms; server CPU: user + system time of the server's processes over the measured run / requests)`);
}

// Bounds the whole run: every target's warm-up and measured run, process starts, the slow backend.
const budgetMs = (10 + WORKER_COUNTS.length + 4) * (WARMUP_S + DURATION_S + 15) * 1_000 + 180_000;
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
