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
import { DEFAULT_SHAPE, windowFor } from './shape.js';

const { values: flags } = parseArgs({
  options: {
    decisions: { type: 'string', default: '200000' },
    concurrency: { type: 'string', default: '64' },
    share: { type: 'string', default: '0.6' },
    help: { type: 'boolean', default: false },
  },
});
if (flags.help) {
  process.stdout.write(`npm run bench:redis [-- options]
  --decisions N    decisions measured (default 200000)
  --concurrency N  decisions in flight (default 64)
  --share F        the share of the tightest limit the windows are sized to hold (default 0.6)
`);
  process.exit(0);
}
const DECISIONS = Number(flags.decisions);
const CONCURRENCY = Number(flags.concurrency);
const SHARE = Number(flags.share);

function groupsFor(windowMs: number): PolicyGroup[][] {
  const shape = DEFAULT_SHAPE;
  return Array.from({ length: shape.keys }, (_, index) => [
    ipGroup(`10.0.${(index % shape.sourceAddresses) >> 8}.${index % shape.sourceAddresses & 255}`, { limit: 600, windowMs }),
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
        const decision = await store.hit(groups[next++ % groups.length] as PolicyGroup[]);
        if (!decision.allowed) refused += 1;
      }
    }),
  );
  return { rate: (count * 1000) / (performance.now() - started), refused };
}

async function main(): Promise<void> {
  const redis = await startRedisServer();
  const admin = new Redis(redis.url);
  try {
    // First pass: the rate this machine drives, with a window too long to refuse anything.
    const probeStores = await createRedisStores({ url: redis.url, keyPrefix: 'probe:' });
    const probe = await drive(probeStores.rateLimits, groupsFor(3_600_000), Math.min(DECISIONS, 50_000)).finally(() => probeStores.close());
    const windowMs = windowFor(DEFAULT_SHAPE, probe.rate, SHARE);
    const stores = await createRedisStores({ url: redis.url });
    const groups = groupsFor(windowMs);
    await drive(stores.rateLimits, groups, Math.min(DECISIONS, 50_000)); // fills the windows
    const before = await snapshot(admin);
    const run = await drive(stores.rateLimits, groups, DECISIONS);
    const cost = costOf(before, await snapshot(admin), DECISIONS);
    await stores.close();
    console.log(`rate-limit decisions: ${DECISIONS} at ${Math.round(run.rate)}/s (${CONCURRENCY} at a time), window ${windowMs} ms = ${SHARE * 100}% of the tightest limit at that rate, ${run.refused} refused`);
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
  }
}

await main();
