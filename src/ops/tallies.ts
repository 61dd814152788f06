/**
 * Metric families counted on every request, kept as plain numbers that the hot path increments
 * through a cell it holds, and turned into prom-client's form only when scraped. prom-client's own
 * Counter and Histogram hash their label object on every `inc`/`observe` (sorted label names, a
 * string built per call): a few µs per request for the four or five counts a request makes. The
 * families these serve have a closed set of label values, so each cell is made once and kept.
 *
 * They register in a prom-client Registry as any metric does (name, help, type, aggregator, get),
 * so the exposition text and the cluster aggregation (src/workers.ts) are prom-client's.
 */
import type { Registry } from 'prom-client';

type LabelValues = Record<string, string | number>;

interface MetricValue {
  labels: LabelValues;
  value: number;
  metricName?: string;
}

interface MetricData {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: MetricValue[];
  aggregator: 'sum';
}

/** What a prom-client Registry needs of a metric (its `registerMetric` takes any such object). */
interface RegistrableMetric {
  name: string;
  get(): Promise<MetricData>;
  reset(): void;
}

function register(registry: Registry, metric: RegistrableMetric): void {
  (registry as unknown as { registerMetric(metric: RegistrableMetric): void }).registerMetric(metric);
}

export interface CounterCell {
  value: number;
}

/** A counter family: `cell(labels)` once per label set, then `cell.value += n` per event. */
export class CounterTally implements RegistrableMetric {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  private readonly cells = new Map<string, { labels: LabelValues; cell: CounterCell }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    register(registry, this);
  }

  /** The cell of one label set (values in `labelNames` order); the same object for the same values. */
  cell(labels: LabelValues): CounterCell {
    const id = this.labelNames.map((name) => String(labels[name])).join('\u0000');
    let entry = this.cells.get(id);
    if (!entry) this.cells.set(id, (entry = { labels: pick(labels, this.labelNames), cell: { value: 0 } }));
    return entry.cell;
  }

  async get(): Promise<MetricData> {
    const values = [...this.cells.values()].map(({ labels, cell }) => ({ labels, value: cell.value }));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    for (const { cell } of this.cells.values()) cell.value = 0;
  }
}

export interface HistogramCell {
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative), the last one past the highest bound. */
  readonly buckets: Float64Array;
}

/** A histogram family: `cell(labels)` once per label set, then `observe(cell, value)` per event. */
export class HistogramTally implements RegistrableMetric {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly cells = new Map<string, { labels: LabelValues; cell: HistogramCell }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    register(registry, this);
  }

  cell(labels: LabelValues): HistogramCell {
    const id = this.labelNames.map((name) => String(labels[name])).join('\u0000');
    let entry = this.cells.get(id);
    if (!entry) {
      const cell = { count: 0, sum: 0, buckets: new Float64Array(this.bounds.length + 1) };
      this.cells.set(id, (entry = { labels: pick(labels, this.labelNames), cell }));
    }
    return entry.cell;
  }

  observe(cell: HistogramCell, value: number): void {
    let bucket = 0;
    while (bucket < this.bounds.length && value > (this.bounds[bucket] as number)) bucket++;
    cell.buckets[bucket] = (cell.buckets[bucket] as number) + 1;
    cell.count += 1;
    cell.sum += value;
  }

  /** As prom-client's Histogram reports itself: cumulative `_bucket` per bound and `+Inf`, `_sum`, `_count`. */
  async get(): Promise<MetricData> {
    const values: MetricValue[] = [];
    for (const { labels, cell } of this.cells.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, index) => {
        cumulative += cell.buckets[index] as number;
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...labels }, value: cell.count, metricName: `${this.name}_bucket` });
      values.push({ labels: { ...labels }, value: cell.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...labels }, value: cell.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    for (const { cell } of this.cells.values()) {
      cell.count = 0;
      cell.sum = 0;
      cell.buckets.fill(0);
    }
  }
}

function pick(labels: LabelValues, names: readonly string[]): LabelValues {
  return Object.fromEntries(names.map((name) => [name, labels[name] as string | number]));
}
