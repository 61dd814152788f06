/**
 * The gateway's own counters, read from its ops listener's /metrics by the benches: requests
 * served, heap in use, its garbage collections (prom-client's `nodejs_gc_duration_seconds`), how
 * late its event loop ran (`nodejs_eventloop_lag_*`), its own share of each answer's time
 * (`http_request_own_duration_seconds`) and its wait for each rate-limit decision
 * (`rate_limit_decision_duration_seconds`).
 */

/** The text of the gateway's /metrics; empty when it does not answer (a sample is then missing, not fatal). */
export function readMetrics(opsUrl: string): Promise<string> {
  return fetch(`${opsUrl}/metrics`).then(
    (response) => response.text(),
    () => '',
  );
}

/** One sample's value, named with its labels as the exposition writes them (`name{label="v"}`); NaN when absent. */
export function metricValue(text: string, sample: string): number {
  const lines = `\n${text}`;
  const at = lines.indexOf(`\n${sample} `);
  if (at === -1) return Number.NaN;
  const start = at + sample.length + 2;
  const end = lines.indexOf('\n', start);
  return Number(lines.slice(start, end === -1 ? undefined : end));
}

/** Collections of one kind: how many, and their pauses in all (s). */
interface Collections {
  count: number;
  seconds: number;
}

/**
 * V8's collections as Node reports them: `minor` the young generation's (scavenges), `major` the
 * whole heap's (mark-compact, its last pause), `incremental` the steps of its marking.
 */
export interface GcTally {
  minor: Collections;
  major: Collections;
  incremental: Collections;
}

type Kind = keyof GcTally;

export function gcTally(text: string): GcTally {
  const of = (kind: Kind): Collections => ({
    count: metricValue(text, `gateway_nodejs_gc_duration_seconds_count{kind="${kind}"}`) || 0,
    seconds: metricValue(text, `gateway_nodejs_gc_duration_seconds_sum{kind="${kind}"}`) || 0,
  });
  return { minor: of('minor'), major: of('major'), incremental: of('incremental') };
}

/** What happened between two readings. */
export function gcBetween(before: GcTally, after: GcTally): GcTally {
  const minus = (kind: Kind): Collections => ({
    count: after[kind].count - before[kind].count,
    seconds: after[kind].seconds - before[kind].seconds,
  });
  return { minor: minus('minor'), major: minus('major'), incremental: minus('incremental') };
}

/** The collections of several runs together. */
export function sumGc(tallies: readonly GcTally[]): GcTally {
  const sum = (kind: Kind): Collections => ({
    count: tallies.reduce((total, tally) => total + tally[kind].count, 0),
    seconds: tallies.reduce((total, tally) => total + tally[kind].seconds, 0),
  });
  return { minor: sum('minor'), major: sum('major'), incremental: sum('incremental') };
}

/** prom-client's event-loop monitor: a timer every 10 ms (its default), each delay measured whole. */
const LOOP_MONITOR_RESOLUTION_MS = 10;

/** How late the gateway's event loop ran, in ms past the monitor's timer: p99 and the most. */
export interface LoopDelay {
  p99: number;
  max: number;
}

/** The delays since the read before: prom-client's monitor starts again at each read of /metrics. */
export function loopDelay(text: string): LoopDelay {
  const late = (sample: string) => Math.max(0, (metricValue(text, sample) || 0) * 1000 - LOOP_MONITOR_RESOLUTION_MS);
  return { p99: late('gateway_nodejs_eventloop_lag_p99_seconds'), max: late('gateway_nodejs_eventloop_lag_max_seconds') };
}

/** The gateway's own share of each answer's time (the answer minus its wait on the backend). */
export const OWN_DURATION = 'gateway_http_request_own_duration_seconds';
/** Its wait for each rate-limit decision: the Redis round trip inside that own share. */
export const DECISION_DURATION = 'gateway_rate_limit_decision_duration_seconds';

/** A histogram's observations (every label set summed), by bucket bound in seconds: cumulative counts. */
export function histogramBuckets(text: string, family: string): Map<number, number> {
  const buckets = new Map<number, number>();
  for (const match of text.matchAll(new RegExp(`^${family}_bucket\\{le="([^"]+)"[^}]*\\} (\\S+)$`, 'gm'))) {
    const bound = match[1] === '+Inf' ? Infinity : Number(match[1]);
    buckets.set(bound, (buckets.get(bound) ?? 0) + Number(match[2]));
  }
  return buckets;
}

/** The observations within `bound` (seconds) between two reads of a histogram's buckets. */
function within(before: Map<number, number>, after: Map<number, number>, bound: number): number {
  return (after.get(bound) ?? 0) - (before.get(bound) ?? 0);
}

/**
 * The bound of the bucket that holds the quantile `q` of the observations between two reads, in
 * ms: as precise as the buckets (Infinity: above the last one; NaN: none).
 */
export function quantileBoundMs(before: Map<number, number>, after: Map<number, number>, q: number): number {
  const total = within(before, after, Infinity);
  if (total <= 0) return Number.NaN;
  const bound = [...after.keys()].sort((a, b) => a - b).find((each) => within(before, after, each) >= q * total);
  return bound === undefined ? Infinity : bound * 1000;
}

/**
 * The share of the observations between two reads within `ms`, one of the histogram's bounds (the
 * added-latency goals, 1 and 3 ms, are): NaN without observations or without that bound.
 */
export function shareWithin(before: Map<number, number>, after: Map<number, number>, ms: number): number {
  const total = within(before, after, Infinity);
  if (total <= 0 || !after.has(ms / 1000)) return Number.NaN;
  return within(before, after, ms / 1000) / total;
}

/** A latency histogram between two reads, as the goals read it. */
export interface Latency {
  /** The bound of the bucket that holds the p99 (quantileBoundMs). */
  p99Ms: number;
  /** The share within 1 ms and within 3 ms, the goals' bounds for p50 and p99 (shareWithin). */
  within1Ms: number;
  within3Ms: number;
}

export function latencyBetween(before: Map<number, number>, after: Map<number, number>): Latency {
  return { p99Ms: quantileBoundMs(before, after, 0.99), within1Ms: shareWithin(before, after, 1), within3Ms: shareWithin(before, after, 3) };
}

/**
 * Watches the gateway from now until `stop()` (as sampleRss samples its memory): its collections,
 * how late its event loop ran, its own share of the answers and its wait for the rate-limit
 * decisions, by its metrics (nothing else may read its /metrics meanwhile).
 */
export async function watchGateway(opsUrl: string): Promise<{ stop(): Promise<{ gc: GcTally; loop: LoopDelay; own: Latency; decisions: Latency }> }> {
  const text = await readMetrics(opsUrl);
  const before = gcTally(text);
  const [ownBefore, decisionsBefore] = [histogramBuckets(text, OWN_DURATION), histogramBuckets(text, DECISION_DURATION)];
  return {
    stop: async () => {
      const after = await readMetrics(opsUrl);
      return {
        gc: gcBetween(before, gcTally(after)),
        loop: loopDelay(after),
        own: latencyBetween(ownBefore, histogramBuckets(after, OWN_DURATION)),
        decisions: latencyBetween(decisionsBefore, histogramBuckets(after, DECISION_DURATION)),
      };
    },
  };
}

export function describeGc(tally: GcTally, durationS: number): string {
  const mean = (kind: Collections): string => (kind.count === 0 ? '' : `, ${((kind.seconds * 1000) / kind.count).toFixed(1)} ms each`);
  const every = tally.minor.count === 0 ? '' : `, one every ${Math.round((durationS * 1000) / tally.minor.count)} ms`;
  const plural = (count: number, noun: string): string => `${count} ${noun}${count === 1 ? '' : 's'}`;
  return (
    `${plural(tally.minor.count, 'young collection')}${every}${mean(tally.minor)}; ` +
    `${plural(tally.major.count, 'full collection')}${mean(tally.major)}, ${plural(tally.incremental.count, 'incremental marking pause')}${mean(tally.incremental)}`
  );
}
