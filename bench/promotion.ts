/**
 * `npm run bench:promotion`: what the gateway's requests leave to the old generation when they wait
 * on a slow upstream. An object that survives two young collections is moved to the old generation
 * and stays there until the next full collection; so does anything an old object still points to.
 * Under a slow backend's load, what a request made before its wait (its promises, closures, the
 * HTTP objects) is old by the time the answer arrives, and the answer's data those objects hold
 * is moved to the old generation too: full collections then follow (docs/benchmark-rounds.md, the seventh and ninth rounds).
 *
 * The gateway runs as in the slow-backend part of `npm run bench` (dist/, the Dockerfile's node
 * options, Redis stores, the replay upstream answering after 200 ms, 500 requests/s at a constant
 * rate), with its inspector open on loopback. V8's sampling heap profiler records allocations over
 * a run twice: once keeping every sample (what a request allocates), once dropping the objects
 * that young collections freed (what reached the old generation, or was still alive at the end:
 * at most the young generation, 8 MB over the run's 4 000 requests). Both are listed by
 * allocation site: what to make less of, and what is held too long. Counted, not timed: the
 * host's speed moves these figures only through how often young collections come.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { WebSocket } from 'undici';
import { startWhmcsSimulator } from '../simulators/whmcs/server.js';
import { startRedisServer } from '../test/helpers/redis.js';
import { ensureBuilt, freePort } from './processes.js';
import { startReplayUpstream } from './replay-upstream.js';
import { invoicePages, LATENCY_MS, pagesPastTheEnd, pagesWithRows, RATE, runOnce, seedWithInvoices, startInvoiceGateway, type PageCall } from './slow-backend.js';

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: '8' },
    top: { type: 'string', default: '12' },
    help: { type: 'boolean', default: false },
  },
});
if (flags.help) {
  process.stdout.write(`npm run bench:promotion [-- options]
  --duration S   seconds of load per measured run (default 8)
  --top N        allocation sites listed per run, for what was allocated and for what reached the old generation (default 12)
`);
  process.exit(0);
}
const DURATION_S = Number(flags.duration);
const TOP = Number(flags.top);
const WARM_UP_S = 10;
/** Bytes between samples: small enough for a few KB a request to show, cheap enough at 500 requests/s. */
const SAMPLING_INTERVAL = 1024;

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/** The DevTools protocol over the inspector's WebSocket: one call at a time is all this needs. */
async function inspector(port: number): Promise<{ call(method: string, params?: object): Promise<unknown>; close(): void }> {
  const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  if (target === undefined) throw new Error('the gateway lists no inspector target');
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  let id = 0;
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const call = message.id === undefined ? undefined : waiting.get(message.id);
    if (call === undefined) return;
    waiting.delete(message.id as number);
    if (message.error) call.reject(new Error(message.error.message));
    else call.resolve(message.result);
  });
  return {
    call: (method, params = {}) =>
      new Promise((resolve, reject) => {
        id += 1;
        waiting.set(id, { resolve, reject });
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}

/** Bytes by allocation site (function, file and line of the code that allocated). */
function bySite(head: ProfileNode): Map<string, number> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const sites = new Map<string, number>();
  const visit = (node: ProfileNode): void => {
    const { functionName, url, lineNumber } = node.callFrame;
    // ES modules are named by URL, CommonJS ones by path, V8's own code by nothing.
    const path = url.startsWith('file://') ? fileURLToPath(url) : url;
    const file = path.startsWith('/') ? relative(root, path) : path || '(native)';
    const site = `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
    if (node.selfSize > 0) sites.set(site, (sites.get(site) ?? 0) + node.selfSize);
    for (const child of node.children) visit(child);
  };
  visit(head);
  return sites;
}

const kb = (bytes: number, requests: number): string => (bytes / requests / 1024).toFixed(1);

async function main(): Promise<void> {
  ensureBuilt();
  const directory = mkdtempSync(join(tmpdir(), 'rg-promotion-'));
  const redis = await startRedisServer();
  const simulator = await startWhmcsSimulator({ host: '127.0.0.1', seed: seedWithInvoices, recordCalls: false });
  const upstream = await startReplayUpstream({ simulatorUrl: simulator.url, latencyMs: LATENCY_MS, replays: (action) => action === 'GetInvoices' });
  const inspectorPort = await freePort();
  const options = { directory, pepper: 'bench-pepper-0123456789abcdef0123456789abcdef', webhookKey: Buffer.alloc(32, 7).toString('base64'), redisUrl: redis.url };
  const { gateway, keys } = await startInvoiceGateway(options, simulator, upstream.url, [`--inspect=127.0.0.1:${inspectorPort}`]);
  const session = await inspector(inspectorPort);
  try {
    const load = (pages: PageCall[], durationS: number) => runOnce(directory, { origin: gateway.url, durationS, connections: 256, requests: invoicePages(keys, pages) });
    console.log(`Promotion: what the gateway's requests leave to the old generation (V8's sampling heap profiler, one sample per ${SAMPLING_INTERVAL} B), upstream answering after ${LATENCY_MS} ms, ${RATE} requests/s, ${DURATION_S} s a run after ${WARM_UP_S} s of warm-up`);
    await load(pagesWithRows(), WARM_UP_S);
    const sample = async (pages: PageCall[], keepYoung: boolean) => {
      await session.call('HeapProfiler.startSampling', { samplingInterval: SAMPLING_INTERVAL, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: keepYoung });
      const result = await load(pages, DURATION_S);
      const { profile } = (await session.call('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
      if (result.errors + result.non2xx > 0) throw new Error(`${result.errors} errors and ${result.non2xx} non-2xx answers during the run`);
      return { sites: bySite(profile.head), requests: result.requests };
    };
    for (const [label, pages] of [['pages past the last row', pagesPastTheEnd()], ['pages of 20-29 rows', pagesWithRows()]] as const) {
      const allocated = await sample(pages, true);
      const old = await sample(pages, false);
      const total = (run: { sites: Map<string, number> }) => [...run.sites.values()].reduce((sum, bytes) => sum + bytes, 0);
      console.log(`\n${label}: ${kb(total(allocated), allocated.requests)} KB allocated a request, ${kb(total(old), old.requests)} KB of it reached the old generation`);
      for (const [what, run] of [['allocated', allocated], ['old generation', old]] as const) {
        console.log(`  KB a request, ${what}, by allocation site:`);
        for (const [site, bytes] of [...run.sites].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`  ${kb(bytes, run.requests).padStart(6)}  ${site}`);
      }
    }
  } finally {
    session.close();
    await gateway.stop();
    await upstream.close();
    await simulator.close();
    await redis.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}

await main();
