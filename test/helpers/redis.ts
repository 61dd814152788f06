/**
 * Throwaway Redis servers for the store tests: a standalone server or a 3-master cluster on
 * loopback, on free ports, in temp directories, with no persistence. Only servers started here are
 * ever touched (the machine's own Redis on 6379 never is). Missing binaries or a server that does
 * not come up throw: a Redis test is never skipped silently. Everything started is stopped, and its
 * directory removed, on stop() and when the process exits.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

export interface RedisServer {
  url: string;
  port: number;
  /** The server's process id (of the command it runs under, if any). */
  readonly pid: number;
  /** Kills the server (its data is gone). */
  stop(): Promise<void>;
  /** Starts an empty server again on the same port. */
  restart(): Promise<void>;
  /** Freezes the process (SIGSTOP): connections stay open, nothing answers. */
  pause(): void;
  /** Lets a paused server run again (SIGCONT). */
  resume(): void;
}

export interface RedisClusterNodes {
  nodes: Array<{ host: string; port: number }>;
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';
/** The machine's own Redis; never ours. */
const FORBIDDEN_PORT = 6379;
/** A cluster node also listens on port + 10000 for the cluster bus. */
const CLUSTER_BUS_OFFSET = 10_000;
const START_TIMEOUT_MS = 10_000;

const running = new Set<ChildProcess>();
const directories = new Set<string>();

export interface RedisServerOptions {
  /** A command the server runs under (its binary and arguments first), e.g. valgrind. */
  runUnder?: string[];
  /** More redis-server flags, e.g. a managed Redis's configuration (`--rename-command CONFIG ""`). */
  args?: string[];
}

export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const binary = findBinary('redis-server');
  const port = await freePort(false);
  const start = () => startInstance(binary, port, () => options.args ?? [], options.runUnder ?? []);
  let instance = await start();
  return {
    url: `redis://${HOST}:${port}`,
    port,
    stop: () => stopInstance(instance),
    get pid() {
      return instance.process.pid as number;
    },
    restart: async () => {
      await stopInstance(instance);
      instance = await start();
    },
    pause: () => instance.process.kill('SIGSTOP'),
    resume: () => instance.process.kill('SIGCONT'),
  };
}

export async function startRedisCluster(): Promise<RedisClusterNodes> {
  const server = findBinary('redis-server');
  const cli = findBinary('redis-cli');
  const instances: Instance[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(instances.map(stopInstance));
  };
  try {
    for (let index = 0; index < 3; index += 1) {
      const port = await freePort(true);
      instances.push(
        await startInstance(server, port, (directory) => [
          '--cluster-enabled', 'yes',
          '--cluster-config-file', join(directory, `nodes-${port}.conf`),
          '--cluster-node-timeout', '2000',
        ]),
      );
    }
    const addresses = instances.map((instance) => `${HOST}:${instance.port}`);
    await run(cli, ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes']);
    for (const instance of instances) {
      await waitFor(`cluster_state:ok on port ${instance.port}`, instance, async () =>
        (await command(instance.port, 'CLUSTER INFO')).includes('cluster_state:ok'),
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { nodes: instances.map((instance) => ({ host: HOST, port: instance.port })), stop };
}

interface Instance {
  port: number;
  process: ChildProcess;
  directory: string;
  /** The server's recent output, for error messages. */
  output: () => string;
}

async function startInstance(
  binary: string,
  port: number,
  extraArgs: (directory: string) => string[],
  runUnder: string[] = [],
): Promise<Instance> {
  const directory = mkdtempSync(join(tmpdir(), 'rg-redis-'));
  directories.add(directory);
  const args = [
    ...['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', directory],
    ...extraArgs(directory),
  ];
  const [executable = binary, ...prefix] = [...runUnder, binary];
  const child = spawn(executable, [...prefix, ...args], { cwd: directory, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  child.on('error', (error) => collect(Buffer.from(`\nspawn failed: ${error.message}`)));
  child.on('exit', () => running.delete(child));
  const instance: Instance = { port, process: child, directory, output: () => output };
  try {
    await waitFor(`redis-server on port ${port} to answer PING`, instance, async () =>
      (await command(port, 'PING')) === 'PONG',
    );
  } catch (error) {
    await stopInstance(instance);
    throw error;
  }
  return instance;
}

async function stopInstance(instance: Instance): Promise<void> {
  const child = instance.process;
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGCONT'); // a paused server would not act on SIGTERM
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
    await exited;
    clearTimeout(timer);
  }
  running.delete(child);
  rmSync(instance.directory, { recursive: true, force: true });
  directories.delete(instance.directory);
}

/** Polls `ready` until it holds; fails early, with the server's output, when the server exits. */
async function waitFor(what: string, instance: Instance, ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const child = instance.process;
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`redis-server on port ${instance.port} exited (${child.exitCode ?? child.signalCode}):\n${instance.output()}`);
    }
    if (await ready().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}:\n${instance.output()}`);
}

/** One inline command over a raw socket; returns a simple-string or bulk reply's text. */
function command(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: HOST, port });
    let reply = '';
    const finish = (error: Error | null, value = ''): void => {
      socket.destroy();
      if (error) reject(error);
      else resolve(value);
    };
    socket.setTimeout(1_000, () => finish(new Error(`no reply to ${text} on port ${port}`)));
    socket.on('error', (error) => finish(error));
    socket.on('connect', () => socket.write(`${text}\r\n`));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      const lineEnd = reply.indexOf('\r\n');
      if (lineEnd < 0) return;
      const head = reply.slice(0, lineEnd);
      if (head.startsWith('+')) return finish(null, head.slice(1));
      if (head.startsWith('-')) return finish(new Error(head.slice(1)));
      const length = Number(head.slice(1));
      if (head.startsWith('$') && reply.length >= lineEnd + 2 + length) {
        return finish(null, reply.slice(lineEnd + 2, lineEnd + 2 + length));
      }
    });
  });
}

function findBinary(name: string): string {
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(directory, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  throw new Error(`${name} not found on PATH: the Redis store tests need Redis installed (e.g. apt-get install redis-server)`);
}

async function run(binary: string, args: string[]): Promise<void> {
  try {
    await promisify(execFile)(binary, args, { timeout: 30_000 });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${binary} ${args.join(' ')} failed: ${(error as Error).message}\n${stdout}${stderr}`);
  }
}

/** A port free now (and, for a cluster node, its bus port too); never the machine's own Redis. */
async function freePort(withBusPort: boolean): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = await listenOnce(0);
    if (port === FORBIDDEN_PORT) continue;
    if (!withBusPort) return port;
    const busPort = port + CLUSTER_BUS_OFFSET;
    if (busPort <= 65_535 && (await listenOnce(busPort).then(() => true, () => false))) return port;
  }
  throw new Error('no free port pair for a Redis cluster node');
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, HOST, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function cleanUp(): void {
  for (const child of running) child.kill('SIGKILL');
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
}

process.once('exit', cleanUp);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    cleanUp();
    process.kill(process.pid, signal);
  });
}
