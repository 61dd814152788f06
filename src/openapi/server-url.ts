/**
 * The absolute base URL integrators reach the gateway at, for the OpenAPI `servers` entry:
 * `publicBaseUrl` from config (PUBLIC_BASE_URL) when set, which production behind a proxy needs;
 * else derived from the listen address (a wildcard or loopback host becomes 127.0.0.1).
 */
import type { GatewayConfig } from '../config.js';

export function publicBaseUrl(config: Partial<Pick<GatewayConfig, 'publicBaseUrl' | 'host' | 'port'>>): string {
  if (config.publicBaseUrl) return config.publicBaseUrl.replace(/\/+$/, '');
  const host = config.host ?? '127.0.0.1';
  const port = config.port ?? 3000;
  const shown = ['0.0.0.0', '::', '', 'localhost'].includes(host) ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}${port === 80 ? '' : `:${port}`}`;
}

/**
 * Said at the start of a gateway serving a real upstream without `publicBaseUrl`: integrators then
 * read a `servers` entry naming the listen address (127.0.0.1 for a wildcard) in the OpenAPI
 * document, and problem types under a base nobody serves (config.ts, defaultProblemTypeBase).
 * Undefined when it is set.
 */
export function publicBaseUrlUnsetWarning(config: Partial<Pick<GatewayConfig, 'publicBaseUrl' | 'host' | 'port'>>): string | undefined {
  if (config.publicBaseUrl) return undefined;
  return `PUBLIC_BASE_URL (publicBaseUrl) is not set: the OpenAPI document tells integrators to use ${publicBaseUrl(config)}, the listen address, and problem types do not resolve; set it to the URL integrators reach the gateway at`;
}
