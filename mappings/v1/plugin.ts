/**
 * The v1 passthrough as a gateway backend of the forwarding kind (src/backend/registry.ts), minus
 * the sandbox: the registry line adds it from simulators/v1/sandbox.ts, loaded lazily.
 */
import type { ForwardingPlugin } from '../../src/backend/registry.js';
import { type V1Config, V1ConfigSchema } from './config.js';
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
  describe: (config) => {
    const url = new URL(config.url);
    return `v1 at ${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  },
};
