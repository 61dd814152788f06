/**
 * SIGTERM and SIGINT. The first starts the graceful stop; one that comes later, while it runs, asks
 * for the exit at once (an operator who will not wait for the drain). A signal within a second of
 * the first is a copy of the same request, not a second one: a terminal's Ctrl-C under `npm start`
 * reaches the gateway from the terminal and again from npm, which forwards it to its child.
 */
const SAME_REQUEST_MS = 1_000;

export type StopSignal = 'SIGINT' | 'SIGTERM';

/** `force` absent: later signals are ignored (a cluster worker, whose primary forces the stop). */
export function onStopSignals(stop: (signal: StopSignal) => void, force?: (signal: StopSignal) => void): void {
  let firstAt: number | undefined;
  const handle = (signal: StopSignal): void => {
    if (firstAt === undefined) {
      firstAt = Date.now();
      stop(signal);
    } else if (force && Date.now() - firstAt >= SAME_REQUEST_MS) {
      force(signal);
    }
  };
  process.on('SIGINT', () => handle('SIGINT'));
  process.on('SIGTERM', () => handle('SIGTERM'));
}
