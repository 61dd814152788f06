/** Each dependency check (health, readiness) gets this long to answer, whatever its own timeouts; silence counts as down. */
export const PING_TIMEOUT_MS = 1_000;

/** The ping's answer, or false once `timeoutMs` has passed (the ping itself runs on and is ignored). */
export function boundedPing(ping: () => Promise<boolean>, timeoutMs = PING_TIMEOUT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  return Promise.race([ping().catch(() => false), timeout]).finally(() => clearTimeout(timer));
}
