/**
 * Log lines that an outage or a flood repeats once per request or event (an open breaker's
 * refusals, shed upstream calls, a dead store polled every half second): the first of a kind is
 * written at once, its repeats are counted and written as one summary line per kind at the end of
 * each window, with their exact count. A kind with no repeat in a whole window is forgotten: its
 * next line is written at once again. Metrics keep counting every event; this only spares the log
 * (thousands of lines a second under a flood cost CPU and disk, and bury the incident).
 */
import type { FastifyBaseLogger } from 'fastify';

export type RepeatLevel = 'info' | 'warn' | 'error';

/** Where a line is written: the root logger, or a request's child (its first line carries the request id). */
type LineLogger = Pick<FastifyBaseLogger, RepeatLevel>;

/** A window's length: short enough to follow an incident, long enough that a flood costs a line per kind. */
export const REPEAT_WINDOW_MS = 10_000;

/**
 * Kinds followed at once, beyond which new kinds count under one catch-all: a message that quotes
 * an upstream's words varies, and must not grow this without bound.
 */
const MAX_KINDS = 200;
const OVERFLOW = '\u0000overflow';

interface Pending {
  level: RepeatLevel;
  msg: string;
  /** What the summary says of the kind (its shared fields). */
  kind: object;
  /** Repeats since the first line or the last summary. */
  count: number;
}

export interface RepeatedLog {
  /**
   * One occurrence of the line `msg` with `kind`'s fields (what every repeat shares: a reason, a
   * backend); `detail` holds what this one alone has (an account, an error's text) and is written
   * only on the first line. `log` writes that first line (default: this log's own logger).
   */
  note(level: RepeatLevel, msg: string, kind: Record<string, unknown>, detail?: object, log?: LineLogger): void;
  /** Writes the summaries pending now (at shutdown: what a window had not written yet). */
  flush(): void;
}

export function createRepeatedLog(log: FastifyBaseLogger, windowMs = REPEAT_WINDOW_MS): RepeatedLog {
  // Summaries are told apart from first lines by this field (`repeated` holds the count).
  const summaries = log.child({ log_summary: true });
  const pending = new Map<string, Pending>();
  let timer: NodeJS.Timeout | undefined;

  function summarize(entry: Pending): void {
    if (entry.count === 0) return;
    summaries[entry.level]({ ...entry.kind, repeated: entry.count, window_ms: windowMs }, `${entry.msg} (repeated ${entry.count} times)`);
    entry.count = 0;
  }

  function endWindow(): void {
    timer = undefined;
    for (const [key, entry] of pending) {
      // Quiet for a whole window: the next line of this kind is news again.
      if (entry.count === 0) pending.delete(key);
      else summarize(entry);
    }
    arm();
  }

  function arm(): void {
    if (timer !== undefined || pending.size === 0) return;
    // Never keeps the process alive: what a window holds at exit is written by flush().
    timer = setTimeout(endWindow, windowMs).unref();
  }

  return {
    note(level, msg, kind, detail, lineLog = log) {
      let key = `${level}\u0000${msg}\u0000${JSON.stringify(kind)}`;
      if (!pending.has(key) && pending.size >= MAX_KINDS) key = OVERFLOW;
      const entry = pending.get(key);
      if (entry) {
        entry.count += 1;
        return;
      }
      pending.set(key, key === OVERFLOW ? { level: 'warn', msg: 'other repeated log lines', kind: {}, count: 0 } : { level, msg, kind, count: 0 });
      lineLog[level]({ ...kind, ...detail }, msg);
      arm();
    },
    flush() {
      clearTimeout(timer);
      timer = undefined;
      for (const entry of pending.values()) summarize(entry);
      pending.clear();
    },
  };
}
