import type { ResolvedConfig } from '../config.js';
import type { UpstreamHooks } from '../upstream/client.js';
import type { Backend } from './backend.js';
import type { BackendLogger } from './logger.js';
import type { BackendRegistry } from './registry.js';

/** The configured backend, built by its registered plugin from its (already validated) section. */
export function createBackend(config: ResolvedConfig, registry: BackendRegistry, logger: BackendLogger, hooks: UpstreamHooks = {}): Backend {
  const { backend: name } = config.upstream;
  const plugin = registry.find((candidate) => candidate.name === name);
  if (!plugin) throw new Error(`backend "${name}" is not registered`);
  return plugin.create(config.upstream[name], { logger, hooks });
}

/** The start-up line's "which backend, where": never a credential. */
export function describeUpstream(config: ResolvedConfig, registry: BackendRegistry): string {
  const { backend: name } = config.upstream;
  const plugin = registry.find((candidate) => candidate.name === name);
  return plugin ? plugin.describe(config.upstream[name]) : name;
}
