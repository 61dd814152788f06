/**
 * One delivery attempt's abort signal: aborted at its deadline, or when the worker stops. Not
 * `AbortSignal.any([timeout, stop])`: on Node 20 a long-lived signal keeps a reference to every
 * signal combined with it, for good (about 66 bytes each: 19 MB after 300 000 attempts, npm run
 * bench:abort-signals); the worker's stop signal lives as long as the process.
 */
export interface AttemptSignal {
  signal: AbortSignal;
  /** True once the deadline aborted it (not the stop). */
  readonly timedOut: boolean;
  /** The attempt is over: its timer and its listener on the stop signal go. */
  done(): void;
}

export function attemptSignal(timeoutMs: number, stop?: AbortSignal): AttemptSignal {
  const controller = new AbortController();
  let timedOut = false;
  // Unreferenced, as AbortSignal.timeout's: an attempt's deadline alone does not keep a process up.
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException('The delivery attempt timed out', 'TimeoutError'));
  }, timeoutMs).unref();
  const onStop = () => controller.abort(stop?.reason);
  if (stop?.aborted) onStop();
  else stop?.addEventListener('abort', onStop, { once: true });
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    done() {
      clearTimeout(timer);
      stop?.removeEventListener('abort', onStop);
    },
  };
}
