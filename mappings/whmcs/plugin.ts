/** The WHMCS backend as the gateway registers it (mappings/index.ts). */
import type { BackendPlugin } from '../../src/backend/registry.js';
import { createWhmcsBackend } from './backend.js';
import { IS_ID } from './backend-calls.js';
import { type WhmcsConfig, WhmcsConfigSchema } from './config.js';

export const whmcsPlugin: Omit<BackendPlugin<WhmcsConfig>, 'sandbox'> = {
  name: 'whmcs',
  configSchema: WhmcsConfigSchema,
  env: [
    { name: 'WHMCS_URL', path: ['url'], kind: 'string' },
    { name: 'WHMCS_IDENTIFIER', path: ['identifier'], kind: 'string' },
    { name: 'WHMCS_SECRET', path: ['secret'], kind: 'string' },
    { name: 'WHMCS_ACCESS_KEY', path: ['accessKey'], kind: 'string' },
  ],
  create: (config, { logger, hooks }) => createWhmcsBackend(config, { logger, ...(hooks ? { hooks } : {}) }),
  upstreamIdProblem: (upstreamId) =>
    IS_ID.test(upstreamId) ? undefined : 'must be a WHMCS client id: a whole number from 1 in digits, without a sign, space or leading zero (e.g. 12)',
  describe: (config) => {
    const url = new URL(config.url);
    return `whmcs at ${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  },
};
