/**
 * The tallies (src/ops/tallies.ts) stand in for prom-client's Counter and Histogram on the hot
 * path: fed the same observations, they must expose byte-for-byte the text prom-client's own
 * families expose, and aggregate over cluster workers the same way.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { CounterTally, HistogramTally } from '../../src/ops/tallies.js';

const BOUNDS = [0.001, 0.005, 0.05, 1];
const LABELS = ['route', 'method', 'status'];
const OBSERVATIONS: Array<[{ route: string; method: string; status: number }, number]> = [
  [{ route: '/v1/me', method: 'GET', status: 200 }, 0.0004],
  [{ route: '/v1/me', method: 'GET', status: 200 }, 0.001],
  [{ route: '/v1/me', method: 'GET', status: 200 }, 0.0011],
  [{ route: '/v1/me', method: 'GET', status: 429 }, 0.02],
  [{ route: '/v1/services/:id', method: 'GET', status: 404 }, 3],
  [{ route: 'with "quotes" \\ and\nnewline', method: 'POST', status: 201 }, 0.7],
];

function theirs(registry: Registry) {
  const counter = new Counter({ name: 'x_requests_total', help: 'Requests.', labelNames: LABELS, registers: [registry] });
  const histogram = new Histogram({ name: 'x_duration_seconds', help: 'Duration.', labelNames: LABELS, buckets: BOUNDS, registers: [registry] });
  for (const [labels, value] of OBSERVATIONS) {
    counter.inc(labels);
    histogram.observe(labels, value);
  }
}

function ours(registry: Registry) {
  const counter = new CounterTally('x_requests_total', 'Requests.', LABELS, registry);
  const histogram = new HistogramTally('x_duration_seconds', 'Duration.', LABELS, BOUNDS, registry);
  for (const [labels, value] of OBSERVATIONS) {
    counter.cell(labels).value += 1;
    histogram.observe(histogram.cell(labels), value);
  }
  return { counter, histogram };
}

t.test('the same exposition text as prom-client for the same observations', async () => {
  const expected = new Registry();
  theirs(expected);
  const actual = new Registry();
  ours(actual);
  assert.equal(await actual.metrics(), await expected.metrics());
});

t.test('a label set keeps one cell', async () => {
  const { counter, histogram } = ours(new Registry());
  assert.equal(counter.cell({ route: '/v1/me', method: 'GET', status: 200 }), counter.cell({ status: 200, method: 'GET', route: '/v1/me' }));
  assert.equal(counter.cell({ route: '/v1/me', method: 'GET', status: 200 }).value, 3);
  assert.equal(histogram.cell({ route: '/v1/me', method: 'GET', status: 429 }).count, 1);
});

t.test('aggregated over workers as prom-client aggregates its own', async () => {
  const workers = async (make: (registry: Registry) => void) => {
    const one = new Registry();
    const two = new Registry();
    make(one);
    make(two);
    return AggregatorRegistry.aggregate([await one.getMetricsAsJSON(), await two.getMetricsAsJSON()]).metrics();
  };
  const aggregated = await workers(ours);
  assert.equal(aggregated, await workers(theirs));
  assert.match(aggregated, /^x_requests_total\{route="\/v1\/me",method="GET",status="200"\} 6$/m);
});

t.test('reset zeroes every cell and keeps it', async () => {
  const registry = new Registry();
  const { counter, histogram } = ours(registry);
  registry.resetMetrics();
  const cell = counter.cell({ route: '/v1/me', method: 'GET', status: 200 });
  assert.equal(cell.value, 0);
  assert.equal(histogram.cell({ route: '/v1/me', method: 'GET', status: 200 }).buckets.every((count) => count === 0), true);
  cell.value += 1;
  assert.match(await registry.metrics(), /^x_requests_total\{route="\/v1\/me",method="GET",status="200"\} 1$/m);
});
