/**
 * The gateway as production runs it, for the chaos tests: `bin/gateway.ts` in a child process, a
 * config file in a temp directory, the harness's own Redis, a WHMCS simulator as the upstream. It
 * can be killed with SIGKILL (no shutdown code runs) and started again on the same port and Redis.
 * Every child still running when the test process exits is killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import type { WhmcsSimulator } from '../../simulators/whmcs/server.js';
import { whmcsSimulatorConfig } from '../../simulators/whmcs/sandbox.js';

export const CHAOS_PEPPER = 'chaos-pepper-0123456789abcdef0123456789abcdef';

const BOOT_TIMEOUT_MS = 60_000;
const OUTPUT_TAIL_CHARS = 8_000;
/** Write actions with long default deadlines that the test never calls: shortened so that they do not stretch the claim's lease. */
const UNUSED_WRITE_ACTIONS = ['ModuleCustom', 'ModuleSuspend', 'ModuleUnsuspend', 'ModuleTerminate', 'AcceptOrder'];
const UNUSED_WRITE_TIMEOUT_MS = 500;

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface ChaosGatewayOptions {
  simulator: WhmcsSimulator;
  redisUrl: string;
  /** The gateway's deadline for AddOrder (reads get `readTimeoutMs`). */
  addOrderTimeoutMs: number;
  readTimeoutMs: number;
  /** How long after a write was sent a retry waits before it may reconcile; passed only when supported. */
  settleMs: number;
  /** Concurrent calls into the simulator: the most AddOrders that can be in flight at once. */
  connections: number;
}

export interface ChaosGateway {
  readonly base: string;
  running(): boolean;
  /** Starts the process and waits until /v1/health answers 200. */
  start(): Promise<void>;
  /** kill -9, and waits for the process to be gone. */
  kill9(): Promise<void>;
  /** Kills the process if it runs and removes the temp directory. */
  dispose(): Promise<void>;
  /** The recent output of the current (or last) process, for failure messages. */
  output(): string;
}

/** The config file: limits out of the way, short timeouts so that a lost claim frees up quickly. */
function chaosConfig(port: number, directory: string, options: ChaosGatewayOptions): Record<string, unknown> {
  const shortWrites = Object.fromEntries(UNUSED_WRITE_ACTIONS.map((action) => [action, UNUSED_WRITE_TIMEOUT_MS]));
  return {
    host: '127.0.0.1',
    port,
    profile: 'A',
    logLevel: 'warn',
    redisUrl: options.redisUrl,
    keys: { pepper: CHAOS_PEPPER },
    webhooks: { encryptionKey: Buffer.alloc(32, 9).toString('base64') },
    rateLimits: { keyPerMinute: 100_000, keyBurst: 10_000, keyPerDay: 1_000_000, accountPerMinute: 100_000, ipPerMinute: 100_000 },
    idempotency: { leaseMarginMs: 100, settleMs: options.settleMs },
    audit: { file: join(directory, 'audit.log') },
    ops: { port: 0 },
    // The in-process doctor refuses all orders (503 backend_misconfigured) once it sees the hidden
    // field, at a moment of its own choosing: off, so that what is tested is the reconciliation rule.
    doctor: { enabled: false },
    upstream: {
      backend: 'whmcs',
      whmcs: {
        ...whmcsSimulatorConfig(options.simulator),
        timeoutMs: options.readTimeoutMs,
        actionTimeoutsMs: { ...shortWrites, GetCurrencies: options.readTimeoutMs, AddOrder: options.addOrderTimeoutMs },
        connections: options.connections,
        // An open breaker would answer "nothing sent" and hide the path under test.
        circuitBreaker: { enabled: false },
      },
    },
  };
}

export async function createChaosGateway(options: ChaosGatewayOptions): Promise<ChaosGateway> {
  const directory = mkdtempSync(join(tmpdir(), 'rg-chaos-'));
  const port = await freePort();
  const configFile = join(directory, 'gateway.json');
  writeFileSync(configFile, JSON.stringify(chaosConfig(port, directory, options), null, 2));
  const base = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let output = '';

  const gone = (): boolean => !child || child.exitCode !== null || child.signalCode !== null;
  const kill9 = async (): Promise<void> => {
    if (!child || gone()) return;
    const exited = new Promise<void>((resolve) => child?.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  };

  return {
    base,
    running: () => !gone(),
    output: () => output,
    kill9,
    async start() {
      if (!gone()) throw new Error('the gateway is already running');
      output = '';
      // Only what the process needs: variables such as REDIS_URL or WHMCS_URL would override the file.
      const env = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, NODE_ENV: 'production', CONFIG_FILE: configFile };
      const started = spawn(process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      child = started;
      running.add(started);
      started.once('exit', () => running.delete(started));
      const collect = (chunk: Buffer): void => {
        output = (output + chunk.toString()).slice(-OUTPUT_TAIL_CHARS);
      };
      started.stdout?.on('data', collect);
      started.stderr?.on('data', collect);
      await waitUntilHealthy(base, gone, () => output);
    },
    async dispose() {
      await kill9();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

async function waitUntilHealthy(base: string, gone: () => boolean, output: () => string): Promise<void> {
  const deadline = Date.now() + BOOT_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (gone()) throw new Error(`the gateway exited while starting:\n${output()}`);
    const status = await request(`${base}/v1/health`, { headersTimeout: 2_000, bodyTimeout: 2_000 }).then(
      async (response) => {
        await response.body.dump();
        return response.statusCode;
      },
      () => 0,
    );
    if (status === 200) return;
    await sleep(100);
  }
  throw new Error(`the gateway did not become healthy within ${BOOT_TIMEOUT_MS} ms:\n${output()}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
