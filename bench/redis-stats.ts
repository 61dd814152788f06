/**
 * What Redis did for the requests of a run. INFO commandstats gives calls and microseconds per
 * command; a script's own commands are counted there too (and their time inside the script's), so
 * the script's `usec` is the whole decision. INFO cpu gives the server's CPU time, network work
 * included. Round trips are counted with MONITOR over a few sequential requests: every command a
 * client sent, the ones scripts ran left out.
 */
import type { Redis } from 'ioredis';

export interface CommandStat {
  calls: number;
  usec: number;
}

export interface RedisSnapshot {
  commands: Map<string, CommandStat>;
  cpuSeconds: number;
}

export async function snapshot(admin: Redis): Promise<RedisSnapshot> {
  const [stats, cpu] = await Promise.all([admin.info('commandstats'), admin.info('cpu')]);
  const commands = new Map<string, CommandStat>();
  for (const [, name, calls, usec] of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    if (name !== undefined && name !== 'info' && name !== 'monitor') commands.set(name, { calls: Number(calls), usec: Number(usec) });
  }
  const user = Number(/^used_cpu_user:([\d.]+)/m.exec(cpu)?.[1] ?? 0);
  const system = Number(/^used_cpu_sys:([\d.]+)/m.exec(cpu)?.[1] ?? 0);
  return { commands, cpuSeconds: user + system };
}

export interface RedisCost {
  /** Per request: calls of each command (a script's own commands included). */
  callsPerRequest: Map<string, number>;
  /** Per request: µs in scripts (EVALSHA/EVAL: the whole decision, its commands included). */
  scriptUsPerRequest: number;
  /** Per request: µs of scripts plus every command sent directly. */
  commandUsPerRequest: number;
  /** Per request: the server's CPU time (commands, networking, everything), µs. */
  cpuUsPerRequest: number;
}

const SCRIPT_COMMANDS = new Set(['evalsha', 'eval', 'evalsha_ro', 'eval_ro', 'fcall']);
/** Commands only the rate-limit script runs (the gateway never sends them itself). */
const SCRIPT_ONLY = new Set(['time', 'mget', 'append']);

export function costOf(before: RedisSnapshot, after: RedisSnapshot, requests: number): RedisCost {
  const callsPerRequest = new Map<string, number>();
  let scriptUs = 0;
  let commandUs = 0;
  for (const [name, stat] of after.commands) {
    const calls = stat.calls - (before.commands.get(name)?.calls ?? 0);
    const usec = stat.usec - (before.commands.get(name)?.usec ?? 0);
    if (calls <= 0) continue;
    callsPerRequest.set(name, calls / requests);
    if (SCRIPT_COMMANDS.has(name)) scriptUs += usec;
    if (SCRIPT_COMMANDS.has(name) || !SCRIPT_ONLY.has(name)) commandUs += usec;
  }
  return {
    callsPerRequest,
    scriptUsPerRequest: scriptUs / requests,
    commandUsPerRequest: commandUs / requests,
    cpuUsPerRequest: ((after.cpuSeconds - before.cpuSeconds) * 1e6) / requests,
  };
}

/** `evalsha 1.00, set 2.00, …`, most frequent first. */
export function describeCalls(calls: Map<string, number>): string {
  if (calls.size === 0) return 'none';
  return [...calls]
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([name, count]) => `${name} ${count.toFixed(2)}`)
    .join(', ');
}

/**
 * Commands clients sent (not those scripts ran) while `work` made `requests` requests, per
 * request, from MONITOR: the round trips. A connection in MONITOR mode serves nothing else.
 */
export async function roundTrips(admin: Redis, requests: number, work: () => Promise<void>): Promise<Map<string, number>> {
  const monitor = await admin.monitor();
  const sent = new Map<string, number>();
  let marker = false;
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    const name = String(args[0]).toLowerCase();
    if (name === 'echo' && args[1] === 'bench-monitor-end') marker = true;
    else if (source !== 'lua' && !marker) sent.set(name, (sent.get(name) ?? 0) + 1);
  });
  try {
    await work();
    // MONITOR reports in the order the server ran commands: once the marker is in, all before it is.
    await admin.echo('bench-monitor-end');
    const deadline = Date.now() + 2_000;
    while (!marker && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  } finally {
    monitor.disconnect();
  }
  return new Map([...sent].map(([name, count]) => [name, count / requests]));
}
