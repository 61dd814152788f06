/**
 * `npm run bench:in-flight`: what the gateway's heap holds for each request waiting on a slow
 * upstream. Everything a waiting request holds survives the young collections during its wait and
 * is copied by each of them (twice before it moves to the old generation), so at a slow backend's
 * rate it sets the length of those pauses (README, "Memory against tail latency").
 *
 * The gateway runs as in production (dist/, the Dockerfile's node options, Redis stores), in front
 * of the WHMCS simulator answering after a few seconds. After a warm-up, the gateway writes a heap
 * snapshot with nothing in flight, then another with `--requests` distinct invoice pages in flight
 * (no two coalesced); both snapshots are taken after a full collection, so their difference is
 * what the waiting requests hold. Counted, not timed: the host's speed does not move it.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createSeedState } from '../simulators/whmcs/fixtures.js';
import { startWhmcsSimulator } from '../simulators/whmcs/server.js';
import { whmcsSimulatorConfig } from '../simulators/whmcs/sandbox.js';
import { createRedisStores } from '../src/stores/redis/index.js';
import { startRedisServer } from '../test/helpers/redis.js';
import { ensureBuilt, freePort, productionNodeArgs, startServer, writeGatewayConfig } from './processes.js';
import { issueKeys, keyHeaders } from './shape.js';

const { values: flags } = parseArgs({
  options: {
    requests: { type: 'string', default: '100' },
    latency: { type: 'string', default: '4000' },
    help: { type: 'boolean', default: false },
  },
});
if (flags.help) {
  process.stdout.write(`npm run bench:in-flight [-- options]
  --requests N   requests in flight when the second snapshot is taken (default 100)
  --latency MS   how long the simulator takes to answer (default 4000; the snapshot is taken halfway)
`);
  process.exit(0);
}
const REQUESTS = Number(flags.requests);
const LATENCY_MS = Number(flags.latency);
const WARM_UP_ROUNDS = 5;

interface Tally {
  bytes: number;
  count: number;
}

/** Self sizes by node type and name (strings, code and numbers by type alone). */
function tallyOf(file: string): Map<string, Tally> {
  const snapshot = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((field) => fields.indexOf(field)) as [number, number, number];
  const tally = new Map<string, Tally>();
  for (let at = 0; at < snapshot.nodes.length; at += fields.length) {
    const type = types[snapshot.nodes[at + typeAt] as number] as string;
    const kind = ['string', 'concatenated string', 'sliced string', 'code', 'number', 'hidden'].includes(type) ? type : `${type} ${snapshot.strings[snapshot.nodes[at + nameAt] as number]?.slice(0, 40)}`;
    const entry = tally.get(kind) ?? { bytes: 0, count: 0 };
    entry.bytes += snapshot.nodes[at + sizeAt] as number;
    entry.count += 1;
    tally.set(kind, entry);
  }
  return tally;
}

function lastBytes(file: string, count: number): string {
  const descriptor = openSync(file, 'r');
  try {
    const size = fstatSync(descriptor).size;
    const bytes = Buffer.alloc(Math.min(count, size));
    readSync(descriptor, bytes, 0, bytes.length, size - bytes.length);
    return bytes.toString('latin1');
  } finally {
    closeSync(descriptor);
  }
}

/** Signals the gateway to write a heap snapshot into `directory` and waits until it is whole. */
async function heapSnapshot(pid: number, directory: string): Promise<string> {
  const before = new Set(readdirSync(directory));
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const written = readdirSync(directory).find((name) => name.endsWith('.heapsnapshot') && !before.has(name));
    if (written === undefined) continue;
    const file = join(directory, written);
    // Written in one pass: whole once it ends the JSON document (its last bytes read, not all of it).
    if (lastBytes(file, 16).trimEnd().endsWith('}')) return file;
  }
  throw new Error(`the gateway wrote no heap snapshot within 60 s (pid ${pid})`);
}

async function main(): Promise<void> {
  ensureBuilt();
  const directory = mkdtempSync(join(tmpdir(), 'rg-in-flight-'));
  const redis = await startRedisServer();
  const simulator = await startWhmcsSimulator({ host: '127.0.0.1', latencyMs: LATENCY_MS, seed: createSeedState, recordCalls: false });
  try {
    const pepper = randomBytes(32).toString('hex');
    const stores = await createRedisStores({ url: redis.url });
    const keys = await issueKeys(stores.keys, pepper, { idPrefix: 'flight', keys: 200, accounts: 20, sourceAddresses: 20 }, ['read:billing']).finally(() => stores.close());
    const port = await freePort();
    const configFile = writeGatewayConfig(join(directory, 'gateway.json'), {
      port,
      redisUrl: redis.url,
      auditFile: join(directory, 'audit.log'),
      whmcs: { ...whmcsSimulatorConfig(simulator), connections: REQUESTS + 50 },
    });
    const gateway = await startServer({
      name: 'gateway',
      args: [...productionNodeArgs(), '--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${directory}`, 'dist/bin/gateway.js'],
      env: { CONFIG_FILE: configFile, KEY_PEPPER: pepper, WEBHOOK_ENCRYPTION_KEY: randomBytes(32).toString('base64'), WORKERS: '1', NODE_ENV: 'production' },
      port,
      readyPath: '/v1/health',
      logFile: join(directory, 'gateway.log'),
    });
    try {
      let page = 100;
      // Distinct pages past the last invoice: one upstream call each, none coalesced with another.
      const round = () =>
        Promise.all(
          Array.from({ length: REQUESTS }, async (_, index) => {
            const response = await fetch(`${gateway.url}/v1/billing/invoices?page=${(page += 1)}&per_page=25`, { headers: keyHeaders(keys[index % keys.length] as (typeof keys)[number]) });
            await response.arrayBuffer();
            if (response.status !== 200) throw new Error(`GET /v1/billing/invoices answered ${response.status}`);
          }),
        );
      for (let warm = 0; warm < WARM_UP_ROUNDS; warm += 1) await round();
      const idle = tallyOf(await heapSnapshot(gateway.pid, directory));
      const waiting = round();
      await new Promise((resolve) => setTimeout(resolve, LATENCY_MS / 2));
      const busy = tallyOf(await heapSnapshot(gateway.pid, directory));
      await waiting;
      report(idle, busy);
    } finally {
      await gateway.stop();
    }
  } finally {
    await simulator.close();
    await redis.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}

function report(idle: Map<string, Tally>, busy: Map<string, Tally>): void {
  const rows = [...busy.keys(), ...[...idle.keys()].filter((kind) => !busy.has(kind))].map((kind) => {
    const before = idle.get(kind) ?? { bytes: 0, count: 0 };
    const after = busy.get(kind) ?? { bytes: 0, count: 0 };
    return { kind, bytes: (after.bytes - before.bytes) / REQUESTS, count: (after.count - before.count) / REQUESTS };
  });
  const total = rows.reduce((sum, row) => sum + row.bytes, 0);
  console.log(`Heap held per request waiting on the upstream (${REQUESTS} in flight, snapshots after a full collection): ${(total / 1024).toFixed(2)} KB`);
  for (const row of rows.sort((a, b) => b.bytes - a.bytes).slice(0, 15)) {
    console.log(`  ${row.bytes.toFixed(0).padStart(6)} B  ${row.count.toFixed(2).padStart(6)} objects  ${row.kind}`);
  }
}

await main();
