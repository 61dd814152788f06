/**
 * The clock behind a simulator's opt-in life of its own (sandbox events): a row becomes due a fixed
 * time after it was first seen, checked by an unref'd timer, so the simulators only say what moves.
 */
export interface ProgressOptions {
  /** How long after it was first seen a row moves on (an order activated, an invoice paid). */
  afterMs: number;
}

/** Calls `step` on every tick with `due(key)`, true once `key` has been seen for `afterMs`; returns a stop function. */
export function startProgressLoop(options: ProgressOptions, step: (due: (key: string) => boolean) => void): () => void {
  const firstSeen = new Map<string, number>();
  const tick = (): void => {
    const now = Date.now();
    step((key) => {
      const seen = firstSeen.get(key) ?? now;
      firstSeen.set(key, seen);
      return now - seen >= options.afterMs;
    });
  };
  const timer = setInterval(tick, Math.max(50, Math.min(1_000, options.afterMs / 4)));
  timer.unref();
  return () => clearInterval(timer);
}
