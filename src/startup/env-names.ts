/**
 * Environment variables set with a name near one the gateway reads (TRUSTED_PROXY, REDIS_URI,
 * WORKER, whmcs_secret). The gateway reads names exactly, so such a setting stays at its default
 * without a word (every client behind the balancer on one address's rate limit, the memory stores,
 * one process), where a misspelled key of the config file stops the boot. Said at start by name,
 * never by value (a value may be a secret).
 */
type Env = Record<string, string | undefined>;

/** The variables the gateway reads beside its config's (src/load-config.ts): sandbox mode's. */
const OTHER_NAMES = ['SANDBOX', 'SANDBOX_PRINT_KEYS', 'SANDBOX_UPSTREAM_LATENCY_MS'];

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/**
 * One line per variable set whose name is not one the gateway reads but differs from one by case
 * or by a few letters (none for names of five letters or fewer: HOME is not a misspelled HOST).
 */
export function misspelledEnvNames(env: Env, configNames: readonly string[]): string[] {
  const known = [...configNames, ...OTHER_NAMES];
  const readNames = new Set(known);
  return Object.keys(env)
    .filter((name) => !readNames.has(name))
    .flatMap((name) => {
      const meant = known.find((each) => editDistance(name.toUpperCase(), each) <= Math.floor(each.length / 5));
      return meant ? [`${name} is not read by the gateway (did you mean ${meant}?); it is ignored`] : [];
    });
}
