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
