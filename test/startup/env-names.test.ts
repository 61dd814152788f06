/**
 * A misspelled environment variable (TRUSTED_PROXY for TRUSTED_PROXIES, REDIS_URI, WORKER) was
 * ignored without a word: the setting stayed at its default (every client behind the balancer
 * sharing one address's rate limit, the memory stores, one process), where a misspelled key of the
 * config file stops the boot. The gateway now names each one at start, with the name it is near,
 * never its value.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import t from 'tap';

t.test('names near the ones the gateway reads are named at boot, values never; the usual environment is not', async () => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: '/home/someone',
    HOSTNAME: 'gateway-1',
    NODE_ENV: 'production',
    TRUSTED_PROXY: '10.0.0.0/8',
    REDIS_URI: 'redis://:hunter2-secret@redis:6379',
    worker_s: '2',
    whmcs_secret: 'not-a-value-to-print',
  };
  delete env.SANDBOX;
  delete env.CONFIG_FILE;
  for (const name of ['REDIS_URL', 'TRUSTED_PROXIES', 'WORKERS', 'WHMCS_SECRET']) delete env[name];
  // No upstream and no sandbox: the boot stops at once (78), after what it read.
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { env, encoding: 'utf8', timeout: 60_000 });
  assert.equal(result.status, 78, result.stderr);
  assert.match(result.stderr, /TRUSTED_PROXY is not read by the gateway \(did you mean TRUSTED_PROXIES\?\)/);
  assert.match(result.stderr, /REDIS_URI is not read by the gateway \(did you mean REDIS_URL\?\)/);
  assert.match(result.stderr, /worker_s is not read by the gateway \(did you mean WORKERS\?\)/);
  assert.match(result.stderr, /whmcs_secret is not read by the gateway \(did you mean WHMCS_SECRET\?\)/);
  assert.doesNotMatch(result.stderr, /hunter2|not-a-value-to-print|10\.0\.0\.0/, 'no value is printed');
  assert.doesNotMatch(result.stderr, /\b(HOME|HOSTNAME|NODE_ENV|PATH) is not read/);
});
