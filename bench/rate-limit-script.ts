/**
 * `npm run bench:redis`: Redis's own CPU time per rate-limit decision (INFO commandstats), the
 * store driven directly, without HTTP in the way, so the figure does not depend on how fast the
 * gateway can offer requests. The shape is the HTTP benchmark's (shape.ts): thousands of keys over
 * hundreds of accounts and source addresses, the contract's default limits, each decision an
 * authenticated request's (the source-IP group and the key/account group in one call). The window
 * is sized to the rate measured in a first pass, so that the counters hold what they hold in real
 * traffic at `--share` of the tightest limit (the fuller the windows, the more a log costs).
 */
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { createRedisStores } from '../src/stores/redis/index.js';
import { ipGroup, keyGroup } from '../src/stores/rate-policies.js';
import type { PolicyGroup, RateLimitStore } from '../src/stores/types.js';
import { startRedisServer } from '../test/helpers/redis.js';
import { costOf, describeCalls, snapshot } from './redis-stats.js';
import { Callgrind } from './callgrind.js';
import { DEFAULT_SHAPE, windowFor } from './shape.js';

const KEY_PREFIX = 'bench:';

const { values: flags } = parseArgs({
  options: {
    decisions: { type: 'string' },
    concurrency: { type: 'string', default: '64' },
    share: { type: 'string', default: '0.6' },
    instructions: { type: 'boolean', default: false },
    random: { type: 'boolean', default: false },
    flood: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (flags.help) {
  process.stdout.write(`npm run bench:redis [-- options]
  --decisions N    decisions measured (default 200000; 5000 with --instructions)
  --concurrency N  decisions in flight (default 64)
  --share F        the share of the tightest limit the windows are sized to hold (default 0.6)
  --random         each decision's key drawn at random (each source address's and account's requests
                   then arrive at uneven intervals, as in real traffic) instead of round-robin
  --flood          every decision from one source address already at its limit (a flood): what a
                   refusal costs Redis (the keys as usual; no window sizing)
  --instructions   count Redis's CPU instructions per decision instead (valgrind's callgrind; about
                   two minutes), against the same commands without the script's logic and an
                   EVALSHA of an empty script, on the same keys: the neighbours' load does not
                   move these; how full the windows are does (compare versions in turns)
`);
  process.exit(0);
}
const INSTRUCTIONS = flags.instructions;
// Under callgrind Redis runs about fifty times slower: fewer decisions, counted exactly.
const DECISIONS = flags.decisions === undefined ? (INSTRUCTIONS ? 5_000 : 200_000) : Number(flags.decisions);
/** Decisions to find the rate and to fill the windows: at least a window's worth (see windowFor). */
const FILL = INSTRUCTIONS ? 30_000 : Math.min(DECISIONS, 50_000);
const CONCURRENCY = Number(flags.concurrency);
const SHARE = Number(flags.share);
/** The index of the n-th decision's key among `count`: round-robin, or drawn at random. */
const pick: (n: number, count: number) => number = flags.random ? (_n, count) => Math.floor(Math.random() * count) : (n, count) => n % count;

/** The source address of the `index`-th key: one of the shape's, or the flood's one. */
function addressOf(index: number): string {
  const addresses = DEFAULT_SHAPE.sourceAddresses;
  return flags.flood ? '198.51.100.1' : `10.0.${(index % addresses) >> 8}.${index % addresses & 255}`;
}

function groupsFor(windowMs: number): PolicyGroup[][] {
  const shape = DEFAULT_SHAPE;
  return Array.from({ length: shape.keys }, (_, index) => [
    ipGroup(addressOf(index), { limit: 600, windowMs }),
    keyGroup({
      accountId: `bench-${index % shape.accounts}`,
      keyId: `key${index}`,
      perMinute: { ratePerMinute: 60, burst: 20, periodMs: windowMs },
      perDay: 5_000_000,
      accountPerMinute: { limit: 120, windowMs },
    }),
  ]);
}

/** Runs `count` decisions, `CONCURRENCY` at a time, round-robin over the keys; returns decisions/s and refusals. */
async function drive(store: RateLimitStore, groups: PolicyGroup[][], count: number): Promise<{ rate: number; refused: number }> {
  let next = 0;
  let refused = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const decision = await store.hit(groups[pick(next++, groups.length)] as PolicyGroup[]);
        if (!decision.allowed) refused += 1;
      }
    }),
  );
  return { rate: (count * 1000) / (performance.now() - started), refused };
}

async function probeRate(url: string): Promise<{ rate: number }> {
  const probeStores = await createRedisStores({ url, keyPrefix: 'probe:' });
  return drive(probeStores.rateLimits, groupsFor(3_600_000), FILL).finally(() => probeStores.close());
}

async function main(): Promise<void> {
  const callgrind = INSTRUCTIONS ? new Callgrind() : undefined;
  const redis = await startRedisServer(callgrind ? { runUnder: callgrind.command() } : {});
  const admin = new Redis(redis.url);
  try {
    // First pass: the rate this machine drives, with a window too long to refuse anything (a flood's
    // window is that long: its address stays at its limit through the run).
    const probe = flags.flood ? undefined : await probeRate(redis.url);
    const windowMs = probe ? windowFor(DEFAULT_SHAPE, probe.rate, SHARE) : 3_600_000;
    const stores = await createRedisStores({ url: redis.url, keyPrefix: KEY_PREFIX });
    const groups = groupsFor(windowMs);
    await drive(stores.rateLimits, groups, FILL); // fills the windows
    const shareNote = probe ? `window ${windowMs} ms = ${SHARE * 100}% of the tightest limit at that rate` : 'one address past its limit of 600';
    if (callgrind) {
      await countInstructions(callgrind, redis, stores.rateLimits, groups, shareNote);
      await stores.close();
      return;
    }
    const before = await snapshot(admin);
    const run = await drive(stores.rateLimits, groups, DECISIONS);
    const cost = costOf(before, await snapshot(admin), DECISIONS);
    await stores.close();
    console.log(`rate-limit decisions: ${DECISIONS} at ${Math.round(run.rate)}/s (${CONCURRENCY} at a time), ${shareNote}, ${run.refused} refused`);
    const after = await snapshot(admin);
    const inside = [...after.commands]
      .filter(([name]) => !['evalsha', 'eval', 'ping', 'hello', 'subscribe', 'info'].includes(name))
      .map(([name, stat]) => ({ name, us: (stat.usec - (before.commands.get(name)?.usec ?? 0)) / DECISIONS }))
      .filter(({ us }) => us > 0);
    console.log(`Redis per decision: script ${cost.scriptUsPerRequest.toFixed(2)} µs (goal ≤ 10), server CPU ${cost.cpuUsPerRequest.toFixed(2)} µs; ${describeCalls(cost.callsPerRequest)}`);
    console.log(`  of the script's time, the commands' own: ${inside.map(({ name, us }) => `${name} ${us.toFixed(2)} µs`).join(', ')}; the rest is the call and Lua`);
  } finally {
    admin.disconnect();
    await redis.stop();
    callgrind?.remove();
  }
}

/**
 * The decision's commands without its logic: TIME, one MGET of what it reads (the source address's
 * log header, not the log: the last key), one write per counter (changing nothing).
 */
const COMMANDS_ALONE = "redis.call('TIME') redis.call('MGET', unpack(KEYS, 1, #KEYS - 1)) for i = 2, #KEYS do redis.call('APPEND', KEYS[i], '') end return 1";
const EMPTY_SCRIPT = 'return 1';

/** Instructions per decision: the store's, then the two baselines on the same keys, in one run. */
async function countInstructions(callgrind: Callgrind, redis: { url: string; pid: number }, store: RateLimitStore, groups: PolicyGroup[][], shareNote: string): Promise<void> {
  const client = new Redis(redis.url);
  try {
    let refused = 0;
    const decisions = await callgrind.count(redis.pid, async () => {
      refused = (await drive(store, groups, DECISIONS)).refused;
    });
    // [the address's log header, the key's counter, the account's log, the address's log]
    const keysOf = (pair: PolicyGroup[]) => {
      const [ip, ...others] = [...new Set(pair.flat().map((check) => check.counter))].map((counter) => KEY_PREFIX + counter);
      return [`${ip}:header`, ...others, ip as string];
    };
    const perScript = async (source: string): Promise<number> => {
      const sha = String(await client.script('LOAD', source));
      let next = 0;
      const total = await callgrind.count(redis.pid, async () => {
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            while (next < DECISIONS) {
              const keys = keysOf(groups[pick(next++, groups.length)] as PolicyGroup[]);
              await client.evalsha(sha, keys.length, ...keys);
            }
          }),
        );
      });
      return total / DECISIONS;
    };
    const script = decisions / DECISIONS;
    const k = (value: number) => `${(value / 1000).toFixed(1)} k`;
    console.log(`rate-limit decisions: ${DECISIONS} under callgrind, ${shareNote}, ${refused} refused`);
    console.log(`Redis instructions per decision (the command's whole handling, network included): ${k(script)}`);
    // A refusal writes nothing: the admitted decision's commands are no baseline for it.
    if (flags.flood) return;
    const alone = await perScript(COMMANDS_ALONE);
    const empty = await perScript(EMPTY_SCRIPT);
    console.log(`  the same commands without the script's logic: ${k(alone)}; an EVALSHA of an empty script: ${k(empty)}`);
    console.log(`  the script's logic: ${k(script - alone)} (${((100 * (script - alone)) / script).toFixed(0)}%); its commands: ${k(alone - empty)}`);
  } finally {
    client.disconnect();
  }
}

await main();
