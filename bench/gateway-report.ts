/**
 * What `npm run bench` prints. Every target is measured in rounds, all targets in turn in each
 * round (bench/gateway.ts): a figure is the median of its rounds, and a ratio the median of the
 * ratios of each round's two runs, which ran seconds apart. On a shared machine whose neighbours
 * move every figure by 10–30 % over minutes, a ratio of two runs minutes apart measured the
 * neighbours as much as the servers; the spread of the rounds' ratios is printed beside each.
 */
import { describeGc, sumGc, type GcTally } from './gateway-metrics.js';
import { describeCalls, type RedisCost } from './redis-stats.js';
import { median, medianAndRange, megabytes, ms, table } from './report.js';
import type { WrkResult } from './wrk.js';

/** One measured run of one target. */
export interface Measurement {
  load: WrkResult;
  redis: RedisCost;
  /** CPU time of the server's processes per request, µs. */
  cpuUs: number;
  rss: { first: number; last: number; max: number };
  /** The gateway's garbage collections over the measured run (one process: WORKERS=1). */
  gc?: GcTally | undefined;
}

/** A target and its measured runs, one per round, in order. */
export interface Target {
  label: string;
  path: string;
  rounds: Measurement[];
}

export interface ReportInput {
  /** In the order their rows are printed. */
  targets: readonly Target[];
  /** Gateway `/v1/products` targets by WORKERS value, the first worker count first. */
  scaling: ReadonlyArray<{ workers: number; target: Target }>;
  paths: readonly string[];
  baselines: { bare: string; evalsha: string; batched: string };
  trips: Map<string, number>;
  windowMs: number;
  durationS: number;
  probeRequests: number;
}

function medianOf(target: Target, read: (m: Measurement) => number): number {
  return median(target.rounds.map(read));
}

/** The median of the rounds' ratios of `read`, and their range when there are several. */
export function roundRatio(numerator: Target, denominator: Target, read: (m: Measurement) => number): string {
  const ratios = numerator.rounds
    .map((m, round) => {
      const under = denominator.rounds[round];
      return under === undefined ? Number.NaN : read(m) / read(under);
    })
    .filter((value) => Number.isFinite(value) && value > 0);
  return ratios.length === 0 ? 'n/a' : medianAndRange(ratios, 2, '×');
}

/**
 * The baseline's server CPU a request over the gateway's, paired per round as `roundRatio`: the
 * throughput ratio the two would have if each had a core to itself (both kinds of server keep
 * their core busy under wrk): a second reading of the rates' ratio, from the figure the README
 * calls the steadiest on a shared machine.
 */
export function cpuRatio(gateway: Target, baseline: Target): string {
  return roundRatio(baseline, gateway, (m) => m.cpuUs);
}

/**
 * Redis commands per request over all rounds (each round weighted by its requests), those under
 * 0.005 a request left out: the background work of the servers that wait for their turn (a
 * gateway's webhook worker polls its stream), which no request sends.
 */
function callsPerRequest(target: Target): Map<string, number> {
  const requests = target.rounds.reduce((sum, m) => sum + m.load.requests, 0);
  const calls = new Map<string, number>();
  for (const m of target.rounds) {
    for (const [name, perRequest] of m.redis.callsPerRequest) calls.set(name, (calls.get(name) ?? 0) + (perRequest * m.load.requests) / requests);
  }
  return new Map([...calls].filter(([, perRequest]) => perRequest >= BACKGROUND_CALLS));
}

const BACKGROUND_CALLS = 0.005;

function gcOf(target: Target): GcTally | undefined {
  const tallies = target.rounds.map((m) => m.gc);
  return tallies.every((tally) => tally !== undefined) ? sumGc(tallies) : undefined;
}

const sumOf = (target: Target, read: (m: Measurement) => number): number => target.rounds.reduce((total, m) => total + read(m), 0);

export function report(input: ReportInput): void {
  const { targets, scaling } = input;
  const rounds = Math.max(...targets.map((target) => target.rounds.length));
  const rows = [
    ['target', 'req/s', 'p50 ms', 'p99 ms', 'errors', '4xx/5xx', 'server CPU µs/req', 'Redis script µs/req', 'Redis CPU µs/req', 'RSS max'],
    ...targets.map((target) => [
      target.label,
      medianOf(target, (m) => m.load.requestsPerSecond).toFixed(0),
      ms(medianOf(target, (m) => m.load.p50Ms)),
      ms(medianOf(target, (m) => m.load.p99Ms)),
      String(sumOf(target, (m) => m.load.errors)),
      String(sumOf(target, (m) => m.load.non2xx)),
      medianOf(target, (m) => m.cpuUs).toFixed(1),
      medianOf(target, (m) => m.redis.scriptUsPerRequest).toFixed(2),
      medianOf(target, (m) => m.redis.cpuUsPerRequest).toFixed(2),
      megabytes(Math.max(...target.rounds.map((m) => m.rss.max))),
    ]),
  ];
  console.log(`\n${rounds === 1 ? 'one round' : `medians of ${rounds} rounds`} (errors and 4xx/5xx: all rounds; RSS: the most of any round)`);
  console.log(`${table(rows)}\n`);

  const find = (label: string): Target | undefined => targets.find((target) => target.label === label);
  const throughput = (m: Measurement) => m.load.requestsPerSecond;
  const tail = (m: Measurement) => m.load.p99Ms;
  const ratioRows = [[rounds === 1 ? 'ratio (same run)' : `ratio (median of the ${rounds} rounds' ratios, and their range)`, 'req/s', 'p99', 'server CPU a request: baseline / gateway', 'target']];
  for (const path of input.paths) {
    const gateway = find(`gateway ${path}`);
    if (!gateway) continue;
    const goals: Record<string, string> = path === '/v1/products' ? { bare: '≥ 0.50× req/s', evalsha: '≥ 0.80× req/s, p99 ≤ 2.00×' } : {};
    for (const kind of ['bare', 'evalsha', 'batched'] as const) {
      const baseline = find(`${input.baselines[kind]} ${path}`);
      if (baseline) ratioRows.push([`gateway ${path} / ${input.baselines[kind]}`, roundRatio(gateway, baseline, throughput), roundRatio(gateway, baseline, tail), cpuRatio(gateway, baseline), goals[kind] ?? '']);
    }
  }
  const [single, ...more] = scaling;
  for (const { workers, target } of more) {
    if (single) ratioRows.push([`gateway WORKERS=${workers} /v1/products / WORKERS=${single.workers}`, roundRatio(target, single.target, throughput), roundRatio(target, single.target, tail), '', '']);
  }
  console.log(`${table(ratioRows)}\n`);

  console.log(`Redis per request (INFO commandstats over the measured runs; a script's own commands counted too; under ${BACKGROUND_CALLS} left out):`);
  for (const target of targets) console.log(`  ${target.label}: ${describeCalls(callsPerRequest(target))}`);
  console.log(`Redis round trips per authenticated GET /v1/products (MONITOR, ${input.probeRequests} sequential requests, keys cached): ${describeCalls(input.trips)} (goal: exactly 1 evalsha)`);
  const products = find('gateway /v1/products');
  if (products) {
    const script = products.rounds.map((m) => m.redis.scriptUsPerRequest);
    console.log(
      `Redis: rate-limit decision ${medianAndRange(script, 2, ' µs')} of script time per request (goal ≤ 10), ` +
        `the server's whole CPU ${medianOf(products, (m) => m.redis.cpuUsPerRequest).toFixed(2)} µs per request (network included)`,
    );
  }
  for (const target of targets) {
    const gc = gcOf(target);
    if (gc) console.log(`Gateway garbage collection, ${target.label.replace(/^gateway /, '')} (measured runs, all rounds): ${describeGc(gc, input.durationS * target.rounds.length)}`);
  }
  const gateways = targets.filter((target) => target.label.startsWith('gateway'));
  const rss = (target: Target) => `${target.label} ${megabytes(target.rounds[0]?.rss.first ?? 0)} → ${megabytes(target.rounds.at(-1)?.rss.last ?? 0)}`;
  console.log(`Gateway RSS (all its processes; the first round's start → the last round's end): ${gateways.map(rss).join('; ')}`);
  console.log(`(window ${input.windowMs} ms; server CPU: user + system time of the server's processes over the measured run / requests)`);
}
