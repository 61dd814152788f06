import type { ResolvedConfig } from '../config.js';
import type { Forwarder } from '../http/forwarding.js';
import type { UpstreamHooks } from '../upstream/observer.js';
import type { Backend } from './backend.js';
import type { BackendLogger } from './logger.js';
import type { BackendRegistry, UpstreamPlugin } from './registry.js';

/** What serves the v1 resources: a mapping's Backend, or a forwarder to an upstream that speaks v1. */
export type Upstream = { kind: 'maps'; backend: Backend } | { kind: 'forwards'; forwarder: Forwarder };

/** What the app needs of either kind: its name, a liveness probe, the longest write, and closing. */
export type UpstreamLink = Pick<Backend, 'name' | 'ping' | 'writeTimeoutMs' | 'close'>;

function pluginOf(config: ResolvedConfig, registry: BackendRegistry): UpstreamPlugin<unknown> | undefined {
  return registry.find((candidate) => candidate.name === config.upstream.backend);
}

/** The configured upstream, built by its registered plugin from its (already validated) section. */
export function createUpstream(config: ResolvedConfig, registry: BackendRegistry, logger: BackendLogger, hooks: UpstreamHooks = {}): Upstream {
  const plugin = pluginOf(config, registry);
  if (!plugin) throw new Error(`backend "${config.upstream.backend}" is not registered`);
  const section = config.upstream[plugin.name];
  return plugin.kind === 'forwards'
    ? { kind: 'forwards', forwarder: plugin.create(section, { logger, hooks }) }
    : { kind: 'maps', backend: plugin.create(section, { logger, hooks }) };
}

export function linkOf(upstream: Upstream): UpstreamLink {
  return upstream.kind === 'maps' ? upstream.backend : upstream.forwarder;
}

/** The start-up line's "which backend, where": never a credential. */
export function describeUpstream(config: ResolvedConfig, registry: BackendRegistry): string {
  const plugin = pluginOf(config, registry);
  return plugin ? plugin.describe(config.upstream[plugin.name]) : config.upstream.backend;
}
