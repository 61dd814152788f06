/**
 * Counting Redis commands two ways. INFO commandstats is the server's count, and it includes every
 * command a Lua script runs (one EVALSHA of `INCR` counts as evalsha + incr). What ioredis sends is
 * the number of round trips; ioredis 6 publishes each command it writes on a diagnostics channel.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Redis } from 'ioredis';

/** Command name → count (or count per request). */
export type CommandCounts = Map<string, number>;

/** ioredis's `tracingChannel('ioredis:command')`: its start event carries `{ command, args, ... }`. */
const COMMAND_SENT_CHANNEL = 'tracing:ioredis:command:start';

/** `calls` of every command since the server started, the INFO command itself left out. */
export async function readCommandStats(admin: Redis): Promise<CommandCounts> {
  const text = await admin.info('commandstats');
  const calls: CommandCounts = new Map();
  for (const [, name, count] of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (name !== undefined && name !== 'info') calls.set(name, Number(count));
  }
  return calls;
}

/** What `after` adds to `before`, divided by `requests`; commands that did not run are left out. */
export function perRequest(before: CommandCounts, after: CommandCounts, requests: number): CommandCounts {
  const result: CommandCounts = new Map();
  for (const [name, count] of after) {
    const delta = count - (before.get(name) ?? 0);
    if (delta > 0 && requests > 0) result.set(name, delta / requests);
  }
  return result;
}

/** The commands every ioredis client of this process writes while `work` runs. */
export async function countCommandsSent(work: () => Promise<void>): Promise<CommandCounts> {
  const sent: CommandCounts = new Map();
  const onSent = (message: unknown): void => {
    const name = (message as { command?: unknown }).command;
    if (typeof name === 'string') sent.set(name, (sent.get(name) ?? 0) + 1);
  };
  subscribe(COMMAND_SENT_CHANNEL, onSent);
  try {
    await work();
  } finally {
    unsubscribe(COMMAND_SENT_CHANNEL, onSent);
  }
  return sent;
}

export function total(counts: CommandCounts): number {
  let sum = 0;
  for (const count of counts.values()) sum += count;
  return sum;
}

/** `evalsha 2.000, get 1.000, …`, most frequent first. */
export function describe(counts: CommandCounts, digits: number): string {
  if (counts.size === 0) return 'none';
  return [...counts]
    .sort(([nameA, a], [nameB, b]) => b - a || nameA.localeCompare(nameB))
    .map(([name, count]) => `${name} ${count.toFixed(digits)}`)
    .join(', ');
}
