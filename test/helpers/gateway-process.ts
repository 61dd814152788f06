/** A gateway process (bin/gateway.ts, the sandbox upstream) for the process tests, with its output collected. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { waitFor } from './wait.js';

export interface RunningGateway {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** The environment of a sandbox gateway keeping its files in `dir`, on ports of the system's choosing; `extra` on top. */
export function sandboxEnv(dir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    SANDBOX: '1',
    PORT: '0',
    OPS_PORT: '0',
    KEYS_FILE: join(dir, 'keys.json'),
    AUDIT_LOG_FILE: join(dir, 'audit.log'),
    ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'),
    LOG_LEVEL: 'info',
    ...extra,
  };
}

/** Starts the gateway with `config` as its config file and waits for the sandbox banner. */
export async function startGateway(t: Test, config: unknown, extra: Record<string, string> = {}): Promise<RunningGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'rg-process-'));
  writeFileSync(join(dir, 'gateway.json'), JSON.stringify(config));
  const env = sandboxEnv(dir, { CONFIG_FILE: join(dir, 'gateway.json'), ...extra });
  if (!extra.REDIS_URL) delete env.REDIS_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += String(chunk)));
  child.stderr?.on('data', (chunk) => (output += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(async () => {
    for (const pid of childPids(child.pid as number)) process.kill(pid, 'SIGKILL');
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  });
  await waitFor(() => (output.includes('try: curl') ? true : undefined), 90_000, 'the banner');
  return { child, output: () => output, exited };
}

/** The pids of a process's children (the cluster's workers); none once it has gone. */
export function childPids(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Resolves with the exit code, or undefined if the process is still running after `ms`. */
export function exitWithin(exited: Promise<number | null>, ms: number): Promise<number | null | undefined> {
  return Promise.race([exited, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms).unref())]);
}

/** A loopback port nothing listens on (one just given up by a listener of the system's choosing). */
export async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
