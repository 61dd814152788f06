/**
 * The benchmark's ratios (bench/gateway-report.ts) pair the runs of one round: a host that slows
 * between rounds moves both runs of a pair, not the ratio. A ratio of the two targets' medians would
 * pair runs minutes apart.
 */
import t from 'tap';
import { cpuRatio, roundRatio, type Measurement, type Target } from '../../bench/gateway-report.js';
import { median } from '../../bench/report.js';

function run(requestsPerSecond: number, p99Ms = 1): Measurement {
  return {
    load: { requests: requestsPerSecond * 4, requestsPerSecond, p50Ms: 0.5, p90Ms: 0.9, p99Ms, maxMs: 2, errors: 0, non2xx: 0 },
    redis: { callsPerRequest: new Map(), scriptUsPerRequest: 0, commandUsPerRequest: 0, cpuUsPerRequest: 0 },
    cpuUs: 10,
    rss: { first: 0, last: 0, max: 0 },
  };
}

const target = (label: string, rates: number[]): Target => ({ label, path: '/v1/products', rounds: rates.map((rate) => run(rate)) });
const rate = (m: Measurement) => m.load.requestsPerSecond;

t.test('median of odd and even counts', async (t) => {
  t.equal(median([3, 1, 2]), 2);
  t.equal(median([4, 1, 3, 2]), 2.5);
  t.ok(Number.isNaN(median([])));
});

t.test('a ratio is the median of each round’s own ratio, with their range', async (t) => {
  // The host halves its speed after the first round: every round's gateway is 0.6× its baseline.
  t.equal(roundRatio(target('gateway', [30_000, 15_000, 14_400]), target('bare', [50_000, 25_000, 24_000]), rate), '0.60× (0.60–0.60)');
  // Rounds' ratios 0.4, 0.8, 0.5: their median 0.5, where the medians' ratio (40 / 60) says 0.67.
  t.equal(roundRatio(target('gateway', [40, 40, 30]), target('bare', [100, 50, 60]), rate), '0.50× (0.40–0.80)');
});

t.test('one round: a plain ratio; missing or empty rounds are left out', async (t) => {
  t.equal(roundRatio(target('a', [30]), target('b', [60]), rate), '0.50×');
  t.equal(roundRatio(target('a', [30, 40]), target('b', [60]), rate), '0.50×');
  t.equal(roundRatio(target('a', [30]), target('b', [0]), rate), 'n/a');
});

t.test('the CPU ratio is the baseline’s CPU a request over the gateway’s, paired per round', async (t) => {
  const withCpu = (label: string, cpu: number[]): Target => ({ label, path: '/v1/products', rounds: cpu.map((cpuUs) => ({ ...run(1_000), cpuUs })) });
  // Rounds' ratios 25 / 50, 40 / 50, 30 / 100: 0.5, 0.8, 0.3. The medians' ratio (30 / 50) would say 0.60.
  t.equal(cpuRatio(withCpu('gateway', [50, 50, 100]), withCpu('bare', [25, 40, 30])), '0.50× (0.30–0.80)');
  t.equal(cpuRatio(withCpu('gateway', [40]), withCpu('bare', [20])), '0.50×', 'a gateway that costs twice the baseline is 0.50×, not 2.00×');
});
