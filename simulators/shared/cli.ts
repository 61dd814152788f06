/** What the simulators' `main.ts` (run by hand) share: reading their numeric settings from the environment. */

/** `name` as a whole number ≥ 0, `fallback` when unset; anything else ends the process (EX_USAGE), naming `tool`. */
export function numberFromEnv(tool: string, name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    process.stderr.write(`${tool}: ${name} must be a non-negative integer, got "${raw}"\n`);
    process.exit(64); // EX_USAGE
  }
  return value;
}

/** Closes the simulator on SIGINT or SIGTERM, then exits. */
export function closeOnSignal(simulator: { close(): Promise<void> }): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void simulator.close().then(() => process.exit(0));
    });
  }
}
