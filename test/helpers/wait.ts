/** Polls `probe` until it gives a value (not undefined), or fails once `timeoutMs` have passed. */
export async function waitFor<T>(probe: () => T | undefined | Promise<T | undefined>, timeoutMs: number, what = 'the condition', everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  throw new Error(`timed out waiting for ${what}`);
}
