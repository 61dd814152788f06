/**
 * The load generator: autocannon's CLI in a child process, so that it has its own event loop and
 * does not steal time from the servers' one (the servers all run in the bench process).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';

const requireFromHere = createRequire(import.meta.url);
const AUTOCANNON_CLI = requireFromHere.resolve('autocannon/autocannon.js');
export const AUTOCANNON_VERSION = String((requireFromHere('autocannon/package.json') as { version: unknown }).version);
/** Time for the child to start, and to report after its run, before it is killed. */
const EXIT_GRACE_MS = 15_000;

export interface LoadRequest {
  url: string;
  headers: Record<string, string>;
  connections: number;
  durationS: number;
}

export interface LoadResult {
  /** autocannon's mean of its per-second samples. */
  requestsPerSecond: number;
  /** Latency percentiles of 2xx responses, in whole ms (autocannon's resolution). */
  p50Ms: number;
  p99Ms: number;
  /** Connection errors plus timeouts. */
  errors: number;
  non2xx: number;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export function runLoad(request: LoadRequest): Promise<LoadResult> {
  const headerArgs = Object.entries(request.headers).flatMap(([name, value]) => ['-H', `${name}=${value}`]);
  const args = [
    AUTOCANNON_CLI, '--json',
    '-c', String(request.connections),
    '-d', String(request.durationS),
    ...headerArgs,
    request.url,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4_000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), request.durationS * 1_000 + EXIT_GRACE_MS);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      if (code !== 0) return reject(new Error(`autocannon exited with ${code ?? signal}:\n${stderr}`));
      try {
        resolve(parseResult(stdout));
      } catch (error) {
        reject(error);
      }
    });
  });
}

function parseResult(stdout: string): LoadResult {
  const line = stdout.trim().split('\n').pop() ?? '';
  const raw = JSON.parse(line) as {
    requests?: { average?: unknown };
    latency?: { p50?: unknown; p99?: unknown };
    errors?: unknown;
    timeouts?: unknown;
    non2xx?: unknown;
  };
  const result = {
    requestsPerSecond: raw.requests?.average,
    p50Ms: raw.latency?.p50,
    p99Ms: raw.latency?.p99,
    errors: Number(raw.errors) + Number(raw.timeouts),
    non2xx: raw.non2xx,
  };
  for (const [field, value] of Object.entries(result)) {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new Error(`autocannon's report lacks ${field}: ${line}`);
  }
  return result as LoadResult;
}
