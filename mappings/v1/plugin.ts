/**
 * The v1 passthrough as a gateway backend of the forwarding kind (src/backend/registry.ts), minus
 * the sandbox: the registry line adds it from simulators/v1/sandbox.ts, loaded lazily.
 */
import type { ForwardingPlugin } from '../../src/backend/registry.js';
import { type V1Config, V1ConfigSchema, UPSTREAM_ID } from './config.js';
import { createV1Forwarder } from './forwarder.js';

export const v1Plugin: Omit<ForwardingPlugin<V1Config>, 'sandbox'> = {
  kind: 'forwards',
  name: 'v1',
  configSchema: V1ConfigSchema,
  env: [
    { name: 'V1_UPSTREAM_URL', path: ['url'], kind: 'string' },
    // `upstreamId=key,upstreamId=key`
    { name: 'V1_UPSTREAM_API_KEYS', path: ['apiKeys'], kind: 'list' },
  ],
  create: (config, deps) => createV1Forwarder(config, deps),
  // As upstream.v1.apiKeys names the upstream's accounts: an id no key can be given for is never served.
  upstreamIdProblem: (upstreamId) =>
    UPSTREAM_ID.test(upstreamId) ? undefined : "must be an account id of the upstream: 1 to 64 of A-Z a-z 0-9 _ . - (starting with a letter or digit)",
  describe: (config) => {
    const url = new URL(config.url);
    return `v1 at ${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  },
};
