/**
 * The processes a benchmark runs: the gateway as production runs it (the compiled build, built
 * first when a source is newer, as `npm start` does), the baseline servers, free ports, and the
 * resident memory of a process and its children (the gateway's workers), read from /proc.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const BUILD_STAMP = 'dist/.build-stamp';
const SOURCES = ['bin', 'src', 'mappings', 'simulators', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((newest, name) => Math.max(newest, newestMtime(join(path, name))), stat.mtimeMs);
}

/** `npm run build` when dist/ is older than a source (the same stamp as scripts/start.mjs). */
export function ensureBuilt(): void {
  const built = existsSync(BUILD_STAMP) ? statSync(BUILD_STAMP).mtimeMs : 0;
  if (built > 0 && !SOURCES.some((source) => newestMtime(source) > built)) return;
  process.stdout.write('building dist/ (npm run build): the gateway runs compiled, as in production…\n');
  const started = new Date();
  const build = spawnSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  if (build.status !== 0) throw new Error(`npm run build failed (${build.status})`);
  writeFileSync(BUILD_STAMP, `${started.toISOString()}\n`);
  utimesSync(BUILD_STAMP, started, started);
}

/**
 * node's options for the gateway as the production image runs it, read from the Dockerfile's CMD
 * (`["node", …options, "dist/bin/gateway.js"]`) so that a bench measures what ships.
 */
export function productionNodeArgs(): string[] {
  const cmd = /^CMD (\[.*\])$/m.exec(readFileSync('Dockerfile', 'utf8'))?.[1];
  const args = cmd === undefined ? [] : (JSON.parse(cmd) as string[]);
  if (args[0] !== 'node' || args.at(-1) !== 'dist/bin/gateway.js') throw new Error(`unexpected CMD in the Dockerfile: ${cmd ?? 'none'}`);
  return args.slice(1, -1);
}

/**
 * The gateway's config file for a bench run, in production shape: Redis stores, the loader's address
 * trusted for X-Forwarded-For, an audit file, the WHMCS simulator as its upstream.
 */
export function writeGatewayConfig(file: string, options: {
  port: number;
  redisUrl: string;
  auditFile: string;
  whmcs: object;
  windowMs?: number;
  logLevel?: string;
}): string {
  writeFileSync(file, JSON.stringify({
    host: '127.0.0.1',
    port: options.port,
    logLevel: options.logLevel ?? 'info',
    redisUrl: options.redisUrl,
    trustedProxies: ['127.0.0.1'],
    ...(options.windowMs === undefined ? {} : { rateLimits: { windowMs: options.windowMs } }),
    audit: { file: options.auditFile },
    upstream: { backend: 'whmcs', whmcs: options.whmcs },
  }));
  return file;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface Server {
  url: string;
  pid: number;
  /** SIGTERM, then SIGKILL after 10 s; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * A baseline server (bench/baseline-server.ts) answering `bodiesFile`'s paths with their bytes:
 * bare, or after one EVALSHA against `redisUrl`, its writes batched as the gateway's when `batch`.
 */
export async function startBaselineServer(options: {
  name: string;
  bodiesFile: string;
  readyPath: string;
  logFile: string;
  redisUrl?: string | undefined;
  batch?: boolean;
}): Promise<Server> {
  const port = await freePort();
  return startServer({
    name: options.name,
    args: ['--import', 'tsx', 'bench/baseline-server.ts'],
    env: {
      BASELINE_PORT: String(port),
      BASELINE_BODIES: options.bodiesFile,
      ...(options.redisUrl === undefined ? {} : { BASELINE_REDIS_URL: options.redisUrl }),
      ...(options.batch ? { BASELINE_BATCH: '1' } : {}),
      NODE_ENV: 'production',
    },
    port,
    readyPath: options.readyPath,
    logFile: options.logFile,
  });
}

/** Spawns `args` with `env` on `port` and waits until GET `readyPath` answers 200. Output goes to `logFile`. */
export async function startServer(options: {
  name: string;
  args: string[];
  env: Record<string, string>;
  port: number;
  readyPath: string;
  logFile: string;
}): Promise<Server> {
  const log = openSync(options.logFile, 'a');
  const child = spawn(process.execPath, options.args, {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', log, log],
  });
  running.add(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    running.delete(child);
    resolve(code);
  }));
  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${options.name} exited (${child.exitCode}) before serving; see ${options.logFile}:\n${tail(options.logFile)}`);
    const ok = await fetch(`${url}${options.readyPath}`).then((response) => response.status === 200, () => false);
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${options.name} did not serve ${options.readyPath} within 60 s; see ${options.logFile}`);
    }
    await sleep(100);
  }
  return {
    url,
    pid: child.pid as number,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

function tail(file: string): string {
  return readFileSync(file, 'utf8').split('\n').slice(-20).join('\n');
}

/** Resident set size in bytes of `pid` and every process below it (a gateway's workers). */
export function treeRss(pid: number): number {
  let total = 0;
  for (const each of [pid, ...descendants(pid)]) {
    try {
      const status = readFileSync(`/proc/${each}/status`, 'utf8');
      const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
      if (match) total += Number(match[1]) * 1024;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

export function descendants(pid: number): number[] {
  const children: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name may hold spaces and parentheses: the fields start after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === pid) children.push(Number(name), ...descendants(Number(name)));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

/** CPU time (user + system, seconds) used so far by `pid` and its children still running. */
export function treeCpuSeconds(pid: number): number {
  const ticks = 100; // USER_HZ on Linux
  let total = 0;
  for (const each of [pid, ...descendants(pid)]) {
    try {
      const stat = readFileSync(`/proc/${each}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / ticks;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** Samples treeRss every `intervalMs` until stopped. */
export function sampleRss(pid: number, intervalMs = 1_000): { stop(): Array<{ atS: number; rss: number }> } {
  const started = Date.now();
  const samples: Array<{ atS: number; rss: number }> = [{ atS: 0, rss: treeRss(pid) }];
  const timer = setInterval(() => samples.push({ atS: (Date.now() - started) / 1000, rss: treeRss(pid) }), intervalMs);
  return {
    stop: () => {
      clearInterval(timer);
      samples.push({ atS: (Date.now() - started) / 1000, rss: treeRss(pid) });
      return samples;
    },
  };
}
