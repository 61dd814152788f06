/** The doctor's config as an operator writes it: the gateway's config file and environment for a WHMCS simulator. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WhmcsSimulator } from '../../simulators/whmcs/server.js';
import { SANDBOX_PUBLIC_PRODUCT_IDS } from '../../simulators/whmcs/fixtures.js';
import { TEST_PEPPER, TEST_WEBHOOK_KEY } from './gateway.js';

/** Writes `dir`/gateway.json for `simulator` and returns the environment that names it (no Redis). */
export function doctorEnv(simulator: WhmcsSimulator, dir: string): NodeJS.ProcessEnv {
  const configFile = join(dir, 'gateway.json');
  writeFileSync(configFile, JSON.stringify({ profile: 'A', upstream: { whmcs: { url: simulator.url, publicProductIds: [...SANDBOX_PUBLIC_PRODUCT_IDS], timeZone: 'UTC' } } }));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CONFIG_FILE: configFile,
    KEY_PEPPER: TEST_PEPPER,
    WEBHOOK_ENCRYPTION_KEY: TEST_WEBHOOK_KEY,
    WHMCS_IDENTIFIER: simulator.identifier,
    WHMCS_SECRET: simulator.secret,
  };
  delete env.REDIS_URL;
  return env;
}
