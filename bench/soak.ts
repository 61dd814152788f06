/**
 * `npm run bench:soak`: the gateway's memory over a long run. The gateway runs compiled, as in
 * production (the Dockerfile CMD's node options, Redis stores, metrics, info logging into a file), under wrk (one thread) cycling
 * through 10 000 keys over 1 000 accounts from 500 source addresses, every key within its limits.
 * Every few seconds it samples the gateway's resident memory (/proc) and its V8 heap (the ops
 * listener's /metrics), then prints them over time, the memory after 1 M requests, and the slope
 * of the resident memory after the first two minutes (least squares, MB per minute).
 *
 * Goals (README "Benchmark"): resident memory ≤ 150 MB after 1 M requests, slope ≤ 1 MB/min.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { startWhmcsSimulator } from '../simulators/whmcs/server.js';
import { whmcsSimulatorConfig } from '../simulators/whmcs/sandbox.js';
import { createRedisStores } from '../src/stores/redis/index.js';
import { startRedisServer } from '../test/helpers/redis.js';
import { describeGc, gcBetween, gcTally, metricValue, readMetrics, type GcTally } from './gateway-metrics.js';
import { ensureBuilt, freePort, productionNodeArgs, startServer, treeRss, writeGatewayConfig } from './processes.js';
import { megabytes, slope, table } from './report.js';
import { issueKeys, requestsFor, windowFor, type LoadShape } from './shape.js';
import { findWrk, runWrk, writeWrkScript } from './wrk.js';

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: '600' },
    interval: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    workers: { type: 'string', default: '1' },
    'node-args': { type: 'string', default: '' },
    help: { type: 'boolean', default: false },
  },
});
if (flags.help) {
  process.stdout.write(`npm run bench:soak [-- options]
  --duration S     seconds of load (default 600: ten minutes)
  --interval S     seconds between samples (default 10)
  --connections N  wrk connections (default 50)
  --workers N      the gateway's WORKERS (default 1)
  --node-args=ARGS node options for the gateway after the Dockerfile CMD's (e.g. --node-args=--max-semi-space-size=16)
`);
  process.exit(0);
}
const DURATION_S = Number(flags.duration);
const INTERVAL_S = Number(flags.interval);
const SHAPE: LoadShape = { idPrefix: 'soak', keys: 10_000, accounts: 1_000, sourceAddresses: 500 };
const PEPPER = 'bench-pepper-0123456789abcdef0123456789abcdef';
/** Limits sized for this rate: far above what one machine sends here, so that no key is refused. */
const SIZED_FOR_RPS = 60_000;
/** The heap grows to its working size over the first minutes (its first full collections): left out of the slope. */
const WARM_UP_S = 120;

interface Sample {
  atS: number;
  requests: number;
  rss: number;
  heapUsed: number;
}

const SERVED = 'gateway_http_requests_total{route="/v1/products",method="GET",status="200"}';

/** Requests are counted by the gateway itself (its /metrics), so that samples taken during the run have them. */
async function sample(opsUrl: string, pid: number, started: number): Promise<{ sample: Sample; gc: GcTally }> {
  const metrics = await readMetrics(opsUrl);
  return {
    sample: {
      atS: (Date.now() - started) / 1000,
      requests: metricValue(metrics, SERVED) || 0,
      rss: treeRss(pid),
      heapUsed: metricValue(metrics, 'gateway_nodejs_heap_size_used_bytes'),
    },
    gc: gcTally(metrics),
  };
}

async function main(): Promise<void> {
  console.log(`reseller-gateway soak: ${DURATION_S} s of wrk -t1 -c${flags.connections} over ${SHAPE.keys} keys, ${SHAPE.accounts} accounts, ${SHAPE.sourceAddresses} source addresses`);
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}\n`);
  ensureBuilt();
  const wrk = findWrk();
  const directory = mkdtempSync(join(tmpdir(), 'rg-soak-'));
  const cleanups: Array<() => Promise<unknown>> = [async () => rmSync(directory, { recursive: true, force: true })];
  try {
    const redis = await startRedisServer();
    cleanups.unshift(() => redis.stop());
    const simulator = await startWhmcsSimulator({ host: '127.0.0.1', recordCalls: false });
    cleanups.unshift(() => simulator.close());
    const stores = await createRedisStores({ url: redis.url });
    const keys = await issueKeys(stores.keys, PEPPER, SHAPE, ['read:products']).finally(() => stores.close());

    const port = await freePort();
    const opsPort = await freePort();
    const configFile = writeGatewayConfig(join(directory, 'gateway.json'), {
      port,
      redisUrl: redis.url,
      windowMs: windowFor(SHAPE, SIZED_FOR_RPS, 0.6),
      auditFile: join(directory, 'audit.log'),
      whmcs: whmcsSimulatorConfig(simulator),
    });
    const gateway = await startServer({
      name: 'gateway',
      args: [...productionNodeArgs(), ...flags['node-args'].split(' ').filter(Boolean), 'dist/bin/gateway.js'],
      env: {
        CONFIG_FILE: configFile,
        KEY_PEPPER: PEPPER,
        WEBHOOK_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
        OPS_PORT: String(opsPort),
        WORKERS: flags.workers,
        NODE_ENV: 'production',
      },
      port,
      readyPath: '/v1/health',
      logFile: join(directory, 'gateway.log'),
    });
    cleanups.unshift(() => gateway.stop());
    const opsUrl = `http://127.0.0.1:${opsPort}`;
    const script = writeWrkScript(directory, 'soak', `127.0.0.1:${port}`, requestsFor('/v1/products', keys));

    const samples: Sample[] = [];
    const started = Date.now();
    const first = await sample(opsUrl, gateway.pid, started);
    const load = runWrk(wrk, { url: gateway.url, script, connections: Number(flags.connections), durationS: DURATION_S });
    let done = false;
    void load.finally(() => (done = true));
    while (!done) {
      samples.push((await sample(opsUrl, gateway.pid, started)).sample);
      process.stdout.write(`  ${samples.at(-1)?.atS.toFixed(0).padStart(4)} s: ${megabytes(samples.at(-1)?.rss ?? 0)} resident, ${(samples.at(-1)?.requests ?? 0).toLocaleString('en')} requests\n`);
      for (let waited = 0; waited < INTERVAL_S * 10 && !done; waited += 1) await sleep(100);
    }
    const result = await load;
    await sleep(1_000);
    const last = await sample(opsUrl, gateway.pid, started);
    samples.push(last.sample);

    console.log(`\n${table([
      ['at (s)', 'requests', 'resident', 'V8 heap used'],
      ...samples.map((s) => [s.atS.toFixed(0), s.requests.toLocaleString('en'), megabytes(s.rss), megabytes(s.heapUsed)]),
    ])}\n`);
    const afterMillion = samples.find((s) => s.requests >= 1_000_000);
    const steady = samples.filter((s) => s.atS >= Math.min(WARM_UP_S, DURATION_S / 2));
    const rssSlope = slope(steady.map((s) => ({ x: s.atS / 60, y: s.rss / 1024 / 1024 })));
    const heapSlope = slope(steady.map((s) => ({ x: s.atS / 60, y: s.heapUsed / 1024 / 1024 })));
    console.log(`${result.requests.toLocaleString('en')} requests in ${DURATION_S} s (${result.requestsPerSecond.toFixed(0)}/s), ${result.errors} errors, ${result.non2xx} 4xx/5xx`);
    console.log(`resident after 1 M requests: ${afterMillion ? megabytes(afterMillion.rss) : 'not reached'} (goal ≤ 150 MB); at the end ${megabytes(samples.at(-1)?.rss ?? 0)}`);
    console.log(`garbage collection over the run: ${describeGc(gcBetween(first.gc, last.gc), last.sample.atS - first.sample.atS)}`);
    console.log(`slope after the first ${Math.min(WARM_UP_S, DURATION_S / 2)} s: resident ${rssSlope.toFixed(2)} MB/min (goal ≤ 1), V8 heap used ${heapSlope.toFixed(2)} MB/min`);
  } finally {
    for (const cleanup of cleanups) await cleanup().catch((error: unknown) => console.error('cleanup failed:', error));
  }
}

try {
  await main();
} catch (error) {
  console.error(error);
  process.exitCode = 1;
}
