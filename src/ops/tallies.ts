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

/** What both kinds share: a family's cells, one per label set, made at its first use and kept. */
abstract class Tally<Cell> implements RegistrableMetric {
  abstract readonly type: MetricData['type'];
  readonly aggregator = 'sum';
  protected readonly cells = new Map<string, { labels: LabelValues; cell: Cell }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    register(registry, this);
  }

  protected abstract newCell(): Cell;
  protected abstract values(labels: LabelValues, cell: Cell): MetricValue[];
  protected abstract clear(cell: Cell): void;

  /** The cell of one label set (values in `labelNames` order); the same object for the same values. */
  cell(labels: LabelValues): Cell {
    const id = this.labelNames.map((name) => String(labels[name])).join('\u0000');
    let entry = this.cells.get(id);
    if (!entry) this.cells.set(id, (entry = { labels: pick(labels, this.labelNames), cell: this.newCell() }));
    return entry.cell;
  }

  async get(): Promise<MetricData> {
    const values = [...this.cells.values()].flatMap(({ labels, cell }) => this.values(labels, cell));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    for (const { cell } of this.cells.values()) this.clear(cell);
  }
}

export interface CounterCell {
  value: number;
}

/** A counter family: `cell(labels)` once per label set, then `cell.value += n` per event. */
export class CounterTally extends Tally<CounterCell> {
  readonly type = 'counter';

  protected newCell(): CounterCell {
    return { value: 0 };
  }

  protected values(labels: LabelValues, cell: CounterCell): MetricValue[] {
    return [{ labels, value: cell.value }];
  }

  protected clear(cell: CounterCell): void {
    cell.value = 0;
  }
}

export interface HistogramCell {
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative), the last one past the highest bound. */
  readonly buckets: Float64Array;
}

/** A histogram family: `cell(labels)` once per label set, then `observe(cell, value)` per event. */
export class HistogramTally extends Tally<HistogramCell> {
  readonly type = 'histogram';

  constructor(name: string, help: string, labelNames: readonly string[], private readonly bounds: readonly number[], registry: Registry) {
    super(name, help, labelNames, registry);
  }

  observe(cell: HistogramCell, value: number): void {
    let bucket = 0;
    while (bucket < this.bounds.length && value > (this.bounds[bucket] as number)) bucket++;
    cell.buckets[bucket] = (cell.buckets[bucket] as number) + 1;
    cell.count += 1;
    cell.sum += value;
  }

  protected newCell(): HistogramCell {
    return { count: 0, sum: 0, buckets: new Float64Array(this.bounds.length + 1) };
  }

  /** As prom-client's Histogram reports itself: cumulative `_bucket` per bound and `+Inf`, `_sum`, `_count`. */
  protected values(labels: LabelValues, cell: HistogramCell): MetricValue[] {
    const values: MetricValue[] = [];
    let cumulative = 0;
    this.bounds.forEach((le, index) => {
      cumulative += cell.buckets[index] as number;
      values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${this.name}_bucket` });
    });
    values.push({ labels: { le: '+Inf', ...labels }, value: cell.count, metricName: `${this.name}_bucket` });
    values.push({ labels: { ...labels }, value: cell.sum, metricName: `${this.name}_sum` });
    values.push({ labels: { ...labels }, value: cell.count, metricName: `${this.name}_count` });
    return values;
  }

  protected clear(cell: HistogramCell): void {
    cell.count = 0;
    cell.sum = 0;
    cell.buckets.fill(0);
  }
}

function pick(labels: LabelValues, names: readonly string[]): LabelValues {
  return Object.fromEntries(names.map((name) => [name, labels[name] as string | number]));
}
