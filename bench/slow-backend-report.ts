/** The slow-backend part's report (bench/slow-backend.ts): its table, the added latencies and what the gateway spent. */
import { describeGc, sumGc, type GcTally, type Latency, type LoopDelay } from './gateway-metrics.js';
import { median, medianAndRange, ms, table } from './report.js';

/** One constant-rate run, as the loader measured it (ms). */
export interface RateResult {
  requests: number;
  errors: number;
  non2xx: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** A run with the server's CPU time per request (µs). */
export type WithCpu = RateResult & { cpuUs: number };
/**
 * A run of the gateway, watched through its /metrics: its collections, its event loop, its own
 * share of the answers and its wait for the rate-limit decisions.
 */
export type Watched = WithCpu & { gc: GcTally; loop: LoopDelay; own: Latency; decisions: Latency };

/** One round's runs. */
export interface Round {
  emptyDirect: RateResult;
  emptyViaGateway: Watched;
  emptyViaRelay: WithCpu;
  rowsDirect: RateResult;
  rowsViaGateway: Watched;
  rowsViaRelay: WithCpu;
  catalog: Watched;
  floor: WithCpu;
}

/** A run's figures over the rounds: latencies the rounds' medians, max the highest, counts summed. */
function overRounds(runs: RateResult[]): RateResult {
  const sum = (read: (run: RateResult) => number) => runs.reduce((total, run) => total + read(run), 0);
  return {
    requests: sum((run) => run.requests),
    errors: sum((run) => run.errors),
    non2xx: sum((run) => run.non2xx),
    p50: median(runs.map((run) => run.p50)),
    p90: median(runs.map((run) => run.p90)),
    p99: median(runs.map((run) => run.p99)),
    max: Math.max(...runs.map((run) => run.max)),
  };
}

/** Each round's difference, taken between its own two runs, seconds apart: their median and range. */
function added(direct: RateResult[], through: RateResult[], read: (run: RateResult) => number): string {
  return medianAndRange(through.map((run, round) => read(run) - read(direct[round] as RateResult)));
}

export function report(rounds: Round[], durationS: number, rate: number): void {
  const of = <K extends keyof Round>(kind: K): Array<Round[K]> => rounds.map((round) => round[kind]);
  const row = (label: string, runs: RateResult[]): string[] => {
    const result = overRounds(runs);
    return [label, String(result.requests), `${result.errors}/${result.non2xx}`, ms(result.p50), ms(result.p90), ms(result.p99), ms(result.max)];
  };
  console.log(table([
    [rounds.length === 1 ? 'target (ms)' : `target (ms; the medians of ${rounds.length} rounds, max the highest)`, 'requests', 'errors/non-2xx', 'p50', 'p90', 'p99', 'max'],
    row('GetInvoices direct, past the last row', of('emptyDirect')),
    row('gateway /v1/billing/invoices, past the last row', of('emptyViaGateway')),
    row('bare Fastify relay, past the last row', of('emptyViaRelay')),
    row('GetInvoices direct, 20-29 rows', of('rowsDirect')),
    row('gateway /v1/billing/invoices, 20-29 rows', of('rowsViaGateway')),
    row('bare Fastify relay, 20-29 rows', of('rowsViaRelay')),
    row('gateway /v1/products (warm)', of('catalog')),
    row('bare Fastify /v1/products', of('floor')),
  ]));
  const measuredS = durationS * rounds.length;
  const cpu = (runs: WithCpu[]) => {
    const us = median(runs.map((run) => run.cpuUs));
    return `${us.toFixed(0)} µs a request (${((us * rate) / 1e4).toFixed(0)} % of a core)`;
  };
  const spent = (runs: Watched[]) =>
    `${cpu(runs)}; its garbage collection: ${describeGc(sumGc(runs.map((run) => run.gc)), measuredS)}; ` +
    `its event loop late by ${medianAndRange(runs.map((run) => run.loop.p99), 1)} ms at p99, at most ${Math.max(...runs.map((run) => run.loop.max)).toFixed(1)} ms`;
  // A latency by the gateway's metric: the median round's bucket bound at p99 (a bound, not a
  // figure, so no range), then the shares within the goals' bounds.
  const latency = (latencies: Latency[]) => {
    const bound = median(latencies.map((each) => each.p99Ms));
    const p99 = Number.isNaN(bound) ? 'n/a' : Number.isFinite(bound) ? `≤ ${Number(bound.toPrecision(3))} ms` : 'above its last bucket';
    const within = (share: (each: Latency) => number) => {
      const shares = latencies.map((each) => share(each) * 100);
      return shares.some(Number.isNaN) ? 'n/a' : `${medianAndRange(shares, 1)} %`;
    };
    return `${p99}; within 1 ms for ${within((each) => each.within1Ms)}, within 3 ms for ${within((each) => each.within3Ms)}`;
  };
  const pages = [
    ['past the last row', of('emptyDirect'), of('emptyViaGateway'), of('emptyViaRelay')],
    ['20-29 rows', of('rowsDirect'), of('rowsViaGateway'), of('rowsViaRelay')],
  ] as const;
  for (const [label, direct, viaGateway, viaRelay] of pages) {
    console.log(`added latency by the gateway, pages ${label}: p50 ${added(direct, viaGateway, (run) => run.p50)} ms (goal ≤ 1), p99 ${added(direct, viaGateway, (run) => run.p99)} ms (goal ≤ 3)`);
    console.log(`  the gateway's CPU: ${spent(viaGateway)}`);
    console.log(`  its own share of each answer at p99, by its metric (gateway_http_request_own_duration_seconds): ${latency(viaGateway.map((run) => run.own))} of the answers (the goals: 50 and 99 %)`);
    console.log(`    of which its wait for each rate-limit decision, the Redis round trip (gateway_rate_limit_decision_duration_seconds): at p99 ${latency(viaGateway.map((run) => run.decisions))}`);
    console.log(
      `  (bare Fastify relaying the same calls, same loader and schedule, the floor of that added latency: ` +
        `p50 ${added(direct, viaRelay, (run) => run.p50)} ms, p99 ${added(direct, viaRelay, (run) => run.p99)} ms; its CPU ${cpu(viaRelay)}; ` +
        `the gateway's p99 above the relay's ${added(viaRelay, viaGateway, (run) => run.p99)} ms)`,
    );
  }
  console.log(`warm catalog p99 ${medianAndRange(of('catalog').map((run) => run.p99))} ms (goal ≤ 5)`);
  console.log(`the gateway's CPU, warm catalog: ${spent(of('catalog'))}`);
  const floor = overRounds(of('floor'));
  console.log(`(bare Fastify answering the catalog's bytes, same loader and schedule: the floor of these figures, p50 ${ms(floor.p50)} ms, p99 ${medianAndRange(of('floor').map((run) => run.p99))} ms; its CPU ${cpu(of('floor'))})`);
}
