/**
 * The slow-backend report (bench/slow-backend-report.ts): an added latency is each round's own
 * difference between two runs seconds apart, the relay's floor and the gateway above it included;
 * the gateway's event-loop delay is read from prom-client's monitor, its 10 ms timer taken off.
 */
import t from 'tap';
import { DECISION_DURATION, histogramBuckets, loopDelay, OWN_DURATION, quantileBoundMs, shareWithin, type GcTally } from '../../bench/gateway-metrics.js';
import { report, type RateResult, type Round } from '../../bench/slow-backend-report.js';

const NO_GC: GcTally = { minor: { count: 0, seconds: 0 }, major: { count: 0, seconds: 0 }, incremental: { count: 0, seconds: 0 } };

function run(p50: number, p99: number): RateResult {
  return { requests: 2000, errors: 0, non2xx: 0, p50, p90: p50, p99, max: p99 + 1 };
}

function round(direct: number, relay: number, gateway: number, loopP99 = 1, within3Ms = 0.9): Round {
  const own = { p99Ms: 25, within1Ms: 0.6, within3Ms };
  const decisions = { p99Ms: 5, within1Ms: 0.95, within3Ms: 0.985 };
  const watched = (p99: number) => ({ ...run(201, p99), cpuUs: 900, gc: NO_GC, loop: { p99: loopP99, max: 2 * loopP99 }, own, decisions });
  return {
    emptyDirect: run(201, direct),
    emptyViaGateway: watched(direct + 1),
    emptyViaRelay: { ...run(201, direct + 0.5), cpuUs: 700 },
    rowsDirect: run(201, direct),
    rowsViaGateway: watched(gateway),
    rowsViaRelay: { ...run(202, relay), cpuUs: 800 },
    catalog: watched(3),
    floor: { ...run(1, 2), cpuUs: 200 },
  };
}

function printed(rounds: Round[]): string {
  const lines: string[] = [];
  const log = console.log;
  console.log = (line: string) => void lines.push(line);
  try {
    report(rounds, 4, 500);
  } finally {
    console.log = log;
  }
  return lines.join('\n');
}

t.test("the relay's floor and the gateway above it pair the runs of one round", async (t) => {
  // The host slows in the second round: every run's p99 moves. The medians' differences would say
  // 50 ms above the direct calls and 40 above the relay; each round's own, 40 and 30.
  const text = printed([round(210, 220, 250, 3), round(300, 312, 310, 9), round(205, 214, 260, 6)]);
  t.match(text, /pages 20-29 rows: p50 0\.00 \(0\.00–0\.00\) ms \(goal ≤ 1\), p99 40\.00 \(10\.00–55\.00\) ms/);
  t.match(text, /the floor of that added latency: p50 1\.00 \(1\.00–1\.00\) ms, p99 10\.00 \(9\.00–12\.00\) ms; its CPU 800 µs a request \(40 % of a core\)/);
  t.match(text, /the gateway's p99 above the relay's 30\.00 \(-2\.00–46\.00\) ms/);
  t.match(text, /event loop late by 6\.0 \(3\.0–9\.0\) ms at p99, at most 18\.0 ms/);
  // Pages past the last row have their own floor, printed under their added latency.
  t.match(text, /pages past the last row: p50 0\.00 \(0\.00–0\.00\) ms \(goal ≤ 1\), p99 1\.00 \(1\.00–1\.00\) ms \(goal ≤ 3\)\n.*\n.*\n.*\n {2}\(bare Fastify relaying the same calls.*p99 0\.50 \(0\.50–0\.50\) ms; its CPU 700 µs a request \(35 % of a core\); the gateway's p99 above the relay's 0\.50 \(0\.50–0\.50\) ms\)/);
});

t.test("the event loop's delay, its monitor's 10 ms timer taken off", async (t) => {
  const metrics = ['gateway_nodejs_eventloop_lag_p99_seconds 0.0213', 'gateway_nodejs_eventloop_lag_max_seconds 0.0485', ''].join('\n');
  const delay = loopDelay(metrics);
  t.ok(Math.abs(delay.p99 - 11.3) < 1e-9);
  t.ok(Math.abs(delay.max - 38.5) < 1e-9);
  // A monitor that saw no delay reads its own period; absent samples read as none.
  t.same(loopDelay('gateway_nodejs_eventloop_lag_p99_seconds 0.0099\n'), { p99: 0, max: 0 });
});

t.test("the gateway's own share at p99: the bound of the bucket that holds it, over the answers between two reads", async (t) => {
  const exposition = (counts: number[]) =>
    [0.001, 0.005, 0.025, Infinity]
      .flatMap((le, index) => [
        `gateway_http_request_own_duration_seconds_bucket{le="${le === Infinity ? '+Inf' : le}",route="/v1/billing/invoices",method="GET",status="200"} ${counts[index]}`,
        // Another route's answers count too (only the measured one is loaded during a run).
        `gateway_http_request_own_duration_seconds_bucket{le="${le === Infinity ? '+Inf' : le}",route="/v1/me",method="GET",status="200"} 1`,
      ])
      .join('\n');
  const before = histogramBuckets(exposition([10, 10, 10, 10]), OWN_DURATION);
  t.equal(before.get(0.005), 11);
  t.equal(before.get(Infinity), 11);
  // 100 answers between the reads: 90 within 1 ms, 8 more within 5 ms, 2 more within 25 ms.
  const after = histogramBuckets(exposition([100, 108, 110, 110]), OWN_DURATION);
  t.equal(quantileBoundMs(before, after, 0.99), 25, 'the 99th answer is in the 25 ms bucket');
  t.equal(quantileBoundMs(before, after, 0.9), 1);
  t.equal(quantileBoundMs(before, histogramBuckets(exposition([100, 108, 108, 110]), OWN_DURATION), 0.99), Infinity, 'two of 100 beyond the last finite bound');
  t.ok(Number.isNaN(quantileBoundMs(before, before, 0.99)), 'no answer: no figure');
  t.match(printed([round(210, 212, 230)]), /its own share of each answer at p99, by its metric \(gateway_http_request_own_duration_seconds\): ≤ 25 ms;/);
});

t.test("the share of the gateway's answers within a goal's bound (1 or 3 ms), by its metric", async (t) => {
  const exposition = (counts: number[]) =>
    [0.001, 0.003, 0.005, Infinity]
      .map((le, index) => `gateway_http_request_own_duration_seconds_bucket{le="${le === Infinity ? '+Inf' : le}",route="/v1/billing/invoices",method="GET",status="200"} ${counts[index]}`)
      .join('\n');
  const before = histogramBuckets(exposition([5, 5, 5, 5]), OWN_DURATION);
  // 200 answers between the reads: 120 within 1 ms, 194 within 3 ms.
  const after = histogramBuckets(exposition([125, 199, 203, 205]), OWN_DURATION);
  t.equal(shareWithin(before, after, 1), 0.6);
  t.equal(shareWithin(before, after, 3), 0.97);
  t.ok(Number.isNaN(shareWithin(before, after, 2)), "not a bound: no figure rather than a neighbour's");
  t.ok(Number.isNaN(shareWithin(before, before, 3)), 'no answer: no figure');
  // The median over the rounds, with their range, beside the goals' shares.
  t.match(
    printed([round(210, 212, 230, 1, 0.9), round(210, 212, 230, 1, 0.97), round(210, 212, 230, 1, 0.95)]),
    /: ≤ 25 ms; within 1 ms for 60\.0 \(60\.0–60\.0\) %, within 3 ms for 95\.0 \(90\.0–97\.0\) % of the answers \(the goals: 50 and 99 %\)/,
  );
});

t.test('the wait for the rate-limit decisions, read from its own family (no labels) beside the own share', async (t) => {
  const text = [
    `${OWN_DURATION}_bucket{le="0.001",route="/v1/me",method="GET",status="200"} 7`,
    `${OWN_DURATION}_bucket{le="0.003",route="/v1/me",method="GET",status="200"} 9`,
    `${OWN_DURATION}_bucket{le="+Inf",route="/v1/me",method="GET",status="200"} 10`,
    `${DECISION_DURATION}_bucket{le="0.001"} 96`,
    `${DECISION_DURATION}_bucket{le="0.003"} 99`,
    `${DECISION_DURATION}_bucket{le="+Inf"} 100`,
    `${DECISION_DURATION}_sum 0.07`,
    `${DECISION_DURATION}_count 100`,
  ].join('\n');
  const decisions = histogramBuckets(text, DECISION_DURATION);
  t.same([...decisions], [[0.001, 96], [0.003, 99], [Infinity, 100]]);
  t.equal(quantileBoundMs(new Map(), decisions, 0.99), 3);
  t.equal(histogramBuckets(text, OWN_DURATION).get(Infinity), 10, "each family's own lines only");
  t.match(printed([round(210, 212, 230)]), /\n {4}of which its wait for each rate-limit decision, the Redis round trip \(gateway_rate_limit_decision_duration_seconds\): at p99 ≤ 5 ms; within 1 ms for 95\.0 %, within 3 ms for 98\.5 %/);
});
