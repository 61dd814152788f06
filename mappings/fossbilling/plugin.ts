/**
 * FOSSBilling as a gateway backend, in the registry's shape (src/backend/registry.ts) minus the
 * sandbox: the registry line adds `sandbox` from simulators/fossbilling/sandbox.ts, loaded lazily,
 * so that this mapping never imports the simulator.
 */
import type { BackendPlugin } from '../../src/backend/registry.js';
import { createFossbillingBackend } from './backend.js';
import { type FossbillingConfig, FossbillingConfigSchema } from './config.js';
import { IS_ID } from './operations.js';

export const fossbillingPlugin: Omit<BackendPlugin<FossbillingConfig>, 'sandbox'> = {
  name: 'fossbilling',
  configSchema: FossbillingConfigSchema,
  env: [
    { name: 'FOSSBILLING_URL', path: ['url'], kind: 'string' },
    { name: 'FOSSBILLING_API_TOKEN', path: ['apiToken'], kind: 'string' },
    { name: 'FOSSBILLING_PUBLIC_PRODUCT_IDS', path: ['publicProductIds'], kind: 'list' },
  ],
  create: (config, { logger, hooks }) => createFossbillingBackend(config, { logger, ...(hooks ? { hooks } : {}) }),
  upstreamIdProblem: (upstreamId) =>
    IS_ID.test(upstreamId) ? undefined : 'must be a FOSSBilling client id: a whole number from 1 in digits, without a sign, space or leading zero (e.g. 12)',
  describe: (config) => `fossbilling at ${new URL(config.url).origin}${new URL(config.url).pathname.replace(/\/+$/, '')}`,
};
