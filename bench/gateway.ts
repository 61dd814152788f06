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
 * addresses via X-Forwarded-For from the trusted loopback proxy; see shape.ts). Every server stays
 * up while the targets are measured in rounds, each round every target in turn: a ratio is taken
 * between runs of one round, seconds apart, and its median over the rounds is reported (see
 * gateway-report.ts).
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
import { watchGateway } from './gateway-metrics.js';
import { report, type Measurement, type ReportInput, type Target } from './gateway-report.js';
import { ensureBuilt, freePort, productionNodeArgs, sampleRss, startBaselineServer, startServer, treeCpuSeconds, type Server, writeGatewayConfig } from './processes.js';
import { costOf, roundTrips, snapshot } from './redis-stats.js';
import { clearCounters, DEFAULT_SHAPE, fetchBody, issueKeys, keyHeaders, requestsFor, windowFor, type IssuedKey } from './shape.js';
import { runSlowBackend } from './slow-backend.js';
import { findWrk, runWrk, writeWrkScript } from './wrk.js';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: process.env.BENCH_ROUNDS ?? '3' },
    duration: { type: 'string', default: process.env.BENCH_DURATION ?? '4' },
    'slow-duration': { type: 'string', default: '4' },
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
  --rounds N        rounds of every target in turn, in both parts (default 3; env BENCH_ROUNDS): figures
                    are the rounds' medians, ratios and added latencies the medians of each round's own
  --duration S      seconds measured per target and round (default 4; env BENCH_DURATION)
  --warmup S        seconds of warm-up before each (default 2)
  --slow-duration S seconds measured per run and round of the slow-backend part (default 4)
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
const ROUNDS = positiveInt('rounds', flags.rounds);
const DURATION_S = positiveInt('duration', flags.duration);
const SLOW_DURATION_S = positiveInt('slow-duration', flags['slow-duration']);
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

function positiveInt(name: string, raw: string): number {
  if (!/^[1-9]\d*$/.test(raw)) throw new Error(`--${name} must be a positive whole number, got "${raw}"`);
  return Number(raw);
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

type Served = Server & { opsUrl?: string };

/** A target of the rounds: what it measures and the server it measures (started at its first round). */
interface Plan extends Target {
  server: () => Promise<Served>;
  workers: number;
}

async function measure(context: Context, plan: Plan, round: string): Promise<Measurement> {
  const server = await plan.server();
  process.stdout.write(`  ${round}${plan.label}: warm-up ${WARMUP_S} s, measuring ${DURATION_S} s…\n`);
  const script = writeWrkScript(context.directory, `${plan.label.replace(/\W+/g, '-')}`, new URL(server.url).host, requestsFor(plan.path, context.keys));
  // Each wrk run starts again at the first key: on a host too slow to go round them all in the
  // warm-up, one more run, at most twice as long as the last (a cold process is slower than it
  // will be), until one has. A gateway idle since its last round holds no fresh key: the same.
  const needed = warmUpPasses(plan.workers) * context.keys.length;
  let durationS = WARMUP_S;
  let warm = await runWrk(context.wrk, { url: server.url, script, connections: CONNECTIONS, durationS });
  while (warm.requests < needed) {
    if (warm.requests === 0) throw new Error(`${plan.label}: no request answered in the warm-up`);
    durationS = Math.min(2 * durationS, Math.ceil((1.2 * needed) / warm.requestsPerSecond));
    process.stdout.write(`    (${warm.requests} requests in the last warm-up, ${needed} needed to use every key: ${durationS} s more)\n`);
    warm = await runWrk(context.wrk, { url: server.url, script, connections: CONNECTIONS, durationS });
  }
  const before = await snapshot(context.admin);
  const watch = server.opsUrl === undefined ? undefined : await watchGateway(server.opsUrl);
  const cpuBefore = treeCpuSeconds(server.pid);
  const rss = sampleRss(server.pid);
  const load = await runWrk(context.wrk, { url: server.url, script, connections: CONNECTIONS, durationS: DURATION_S });
  const samples = rss.stop().map((sample) => sample.rss);
  const cpuUs = ((treeCpuSeconds(server.pid) - cpuBefore) * 1e6) / load.requests;
  const redis = costOf(before, await snapshot(context.admin), load.requests);
  const gc = (await watch?.stop())?.gc;
  return { load, redis, cpuUs, rss: { first: samples[0] ?? 0, last: samples[samples.length - 1] ?? 0, max: Math.max(...samples) }, gc };
}

/** Starts a server once, at first use; `started` keeps what to stop. */
function startedOnce(started: Array<{ name: string; server: Promise<Served> }>, name: string, start: () => Promise<Served>): () => Promise<Served> {
  let server: Promise<Served> | undefined;
  return () => {
    if (!server) started.push({ name, server: (server = start()) });
    return server;
  };
}

async function main(): Promise<void> {
  const cpuList = cpus();
  console.log(`reseller-gateway benchmark: wrk -t1 -c${CONNECTIONS}, ${ROUNDS} round${ROUNDS === 1 ? '' : 's'} of every target in turn, each ${WARMUP_S} s warm-up + ${DURATION_S} s measured, loopback`);
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

    const slow = { directory, durationS: SLOW_DURATION_S, rounds: ROUNDS, pepper: PEPPER, webhookKey: WEBHOOK_KEY, redisUrl: redis.url, admin, nodeArgs: flags['node-args'].split(' ').filter(Boolean) };
    if (flags['slow-only']) {
      await runSlowBackend(slow);
      return;
    }
    const stores = await createRedisStores({ url: redis.url });
    const keys = await issueKeys(stores.keys, PEPPER, DEFAULT_SHAPE, ['read:products', 'read:orders', 'read:services']).finally(() => stores.close());
    console.log(`shape: ${DEFAULT_SHAPE.keys} keys over ${DEFAULT_SHAPE.accounts} accounts, from ${DEFAULT_SHAPE.sourceAddresses} source addresses (X-Forwarded-For), round-robin; redis-server on port ${redis.port}`);
    const context: Context = { wrk, directory, keys, admin };

    const startGateway = async (windowMs: number, workers: number, profileDirectory?: string, measured = true): Promise<Served> => {
      const name = `gateway-${workers}`;
      const port = await freePort();
      const configFile = writeGatewayConfig(join(directory, `${name}.json`), {
        port,
        logLevel: flags['log-level'],
        redisUrl: redis.url,
        windowMs,
        auditFile: join(directory, `${name}-audit.log`),
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
        port,
        readyPath: '/v1/health',
        logFile: join(directory, `${name}.log`),
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

    // Every server stays up through the rounds (an idle one costs nothing measurable).
    const started: Array<{ name: string; server: Promise<Served> }> = [];
    /** Stops the servers started, the one named `keep` aside. */
    const stopServers = async (keep?: string): Promise<void> => {
      for (const each of started.splice(0).reverse()) {
        if (each.name === keep) {
          started.push(each);
          continue;
        }
        const code = await (await each.server).stop();
        if (code !== 0 && each.name.startsWith('gateway')) console.log(`  (${each.name} exited ${code} at SIGTERM)`);
      }
    };
    cleanups.unshift(() => stopServers());
    const plans: Plan[] = [];
    for (const baseline of flags['no-baselines'] ? [] : BASELINES) {
      const server = startedOnce(started, baseline, () =>
        startBaselineServer({
          name: `${baseline} baseline`,
          bodiesFile,
          redisUrl: baseline === 'bare Fastify' ? undefined : redis.url,
          batch: baseline === BATCHED,
          readyPath: PATHS[0] ?? '/v1/products',
          logFile: join(directory, 'baseline.log'),
        }),
      );
      for (const path of PATHS) plans.push({ label: `${baseline} ${path}`, path, rounds: [], server, workers: 1 });
    }

    // The limits' window comes from the bare baseline's first round, so the gateways start after it.
    let windowMs: number | undefined;
    const windowOnce = async (): Promise<number> => {
      if (windowMs !== undefined) return windowMs;
      const bareRate = plans[0]?.rounds[0]?.load.requestsPerSecond;
      windowMs = flags.window ? positiveInt('window', flags.window) : bareRate ? windowFor(DEFAULT_SHAPE, bareRate, LIMIT_SHARE) : 1_000;
      console.log(
        `\nlimits: contract defaults per window, the window ${windowMs} ms` +
          (bareRate && !flags.window ? `: at the bare baseline's rate the load would take ${LIMIT_SHARE * 100}% of every account's limit` : ''),
      );
      await clearCounters(admin, KEY_PREFIX);
      return windowMs;
    };
    const scaling: ReportInput['scaling'][number][] = [];
    let probed: { name: string; server: () => Promise<Served> } | undefined;
    for (const workers of WORKER_COUNTS) {
      const isFirst = workers === WORKER_COUNTS[0];
      const name = `gateway WORKERS=${workers}`;
      const server = startedOnce(started, name, async () => startGateway(await windowOnce(), workers, isFirst && workers === 1 ? flags['cpu-prof'] : undefined));
      const label = isFirst ? 'gateway' : `gateway WORKERS=${workers}`;
      for (const path of isFirst ? PATHS : ['/v1/products']) {
        const plan: Plan = { label: `${label} ${path}`, path, rounds: [], server, workers };
        plans.push(plan);
        if (path === '/v1/products') scaling.push({ workers, target: plan });
      }
      if (isFirst) probed = { name, server };
    }

    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const plan of plans) plan.rounds.push(await measure(context, plan, ROUNDS === 1 ? '' : `[${round}/${ROUNDS}] `));
    }

    // Keys just used (their copies fresh), then the same keys again, counted; the other servers
    // stopped first (the commands of an idle gateway's background work would be counted too).
    let trips = new Map<string, number>();
    if (probed) {
      await stopServers(probed.name);
      const gateway = await probed.server();
      const probe = async (): Promise<void> => {
        for (let index = 0; index < PROBE_REQUESTS; index += 1) await fetchBody(`${gateway.url}/v1/products`, keyHeaders(keys[index] as IssuedKey));
      };
      await probe();
      trips = await roundTrips(admin, PROBE_REQUESTS, probe);
    }
    await stopServers();

    report({
      targets: plans,
      scaling,
      paths: PATHS,
      baselines: { bare: BASELINES[0], evalsha: BASELINES[1], batched: BATCHED },
      trips,
      windowMs: windowMs ?? 0,
      durationS: DURATION_S,
      probeRequests: PROBE_REQUESTS,
    });
    if (!flags['no-slow']) await runSlowBackend(slow);
  } finally {
    for (const cleanup of cleanups) await cleanup().catch((error: unknown) => console.error('cleanup failed:', error));
  }
}

// Bounds the whole run: every target's warm-up and measured run, process starts, the slow backend.
const TARGETS = (flags['no-baselines'] ? 0 : BASELINES.length * PATHS.length) + PATHS.length + WORKER_COUNTS.length - 1;
// The slow-backend part: per round eight runs, each with its 3 s of warm-up; the JIT's warm-up of the gateway and the relay.
const budgetMs = (ROUNDS * TARGETS * (WARMUP_S + DURATION_S + 15) + ROUNDS * 8 * (SLOW_DURATION_S + 10) + 2 * 15 + 240) * 1_000;
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
