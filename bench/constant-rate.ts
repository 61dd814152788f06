/**
 * A constant-rate (open-loop) load generator, in its own process: requests leave on a fixed
 * schedule whatever the answers do, and each latency is measured from the time the request was
 * due, so a server that falls behind shows it (no coordinated omission). wrk2 is not packaged in
 * Debian; this is the small part of it the slow-backend benchmark needs.
 *
 * Input (a JSON file, argv[2]): { origin, rate, durationS, connections, requests: [{method, path, headers, body?}] }
 * (cycled through). Output: one line `RATE_JSON {...}` with the count, errors, non-2xx and the
 * latency percentiles in ms.
 */
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

interface Input {
  origin: string;
  rate: number;
  durationS: number;
  connections: number;
  requests: Array<{ method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string }>;
}

const input = JSON.parse(readFileSync(String(process.argv[2]), 'utf8')) as Input;
// A request unanswered for this long counts as an error, so that the run always ends.
const REQUEST_TIMEOUT_MS = 30_000;
const pool = new Pool(input.origin, { connections: input.connections, pipelining: 1, headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS });
const total = Math.round(input.rate * input.durationS);
const latencies: number[] = [];
let errors = 0;
let non2xx = 0;
let sent = 0;
let finished = 0;

function send(index: number, dueAt: number): void {
  const request = input.requests[index % input.requests.length] as Input['requests'][number];
  pool
    .request({ origin: input.origin, method: request.method, path: request.path, headers: request.headers, body: request.body ?? null })
    .then(async (response) => {
      await response.body.dump();
      if (response.statusCode >= 300) non2xx += 1;
      latencies.push(performance.now() - dueAt);
    })
    .catch(() => (errors += 1))
    .finally(() => {
      finished += 1;
      if (finished === total) void report();
    });
}

const start = performance.now() + 50;
const timer = setInterval(() => {
  const now = performance.now();
  while (sent < total && start + (sent * 1000) / input.rate <= now) {
    send(sent, start + (sent * 1000) / input.rate);
    sent += 1;
  }
  if (sent === total) clearInterval(timer);
}, 1);

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

async function report(): Promise<void> {
  const sorted = latencies.sort((a, b) => a - b);
  process.stdout.write(
    `RATE_JSON ${JSON.stringify({
      requests: total,
      errors,
      non2xx,
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      max: sorted[sorted.length - 1] ?? Number.NaN,
    })}\n`,
  );
  // The figures are out (stdout to a pipe is written synchronously): nothing to wait for. Once, a
  // pool.close() here never settled, and the benchmark waited on this process until its watchdog.
  process.exit(0);
}
