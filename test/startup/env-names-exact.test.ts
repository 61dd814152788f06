/**
 * The misspelled-name warning (src/startup/env-names.ts) names only variables the
 * gateway does not read. A name spelled exactly as one it reads (REDIS_URL, SANDBOX) is at distance
 * 0 from itself: without the exact-name check every correctly set variable was warned of as a typo
 * of itself, at every start.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { configEnvNames } from '../../src/load-config.js';
import { misspelledEnvNames } from '../../src/startup/env-names.js';

t.test('names the gateway reads, spelled right, are not warned of; a wrong case is', async () => {
  const names = configEnvNames(BACKENDS);
  const env = { REDIS_URL: 'redis://r:6379', TRUSTED_PROXIES: '10.0.0.0/8', WORKERS: '2', WHMCS_SECRET: 's', KEY_PEPPER: 'p', SANDBOX: '1', SANDBOX_PRINT_KEYS: '1', HOME: '/root', PATH: '/bin' };
  assert.deepEqual(misspelledEnvNames(env, names), []);
  // Short names are not matched: a one-letter change makes another common variable of them.
  assert.deepEqual(misspelledEnvNames({ HOSTS: 'a', PORTS: 'b' }, names), []);
  assert.deepEqual(misspelledEnvNames({ redis_url: 'redis://r:6379' }, names), ['redis_url is not read by the gateway (did you mean REDIS_URL?); it is ignored']);
});
