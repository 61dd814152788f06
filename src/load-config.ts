/**
 * The config the process boots with: CONFIG_FILE (config/gateway.json when unset) with the
 * environment applied on top, validated by parseConfig (config.ts).
 */
import { readFileSync } from 'node:fs';
import type { BackendEnvVar, BackendRegistry } from './backend/registry.js';
import { ConfigError, parseConfig, type GatewayConfig } from './config.js';
import { jsonSyntaxError } from './json-syntax.js';

const DEFAULT_CONFIG_FILE = 'config/gateway.json';

type Env = Record<string, string | undefined>;

type EnvKind = 'string' | 'int' | 'list' | 'json';

/** Environment variables and the config path each one sets. */
const ENV_OVERRIDES: Array<[name: string, path: string[], kind: EnvKind]> = [
  ['WORKERS', ['workers'], 'string'],
  ['HOST', ['host'], 'string'],
  ['PORT', ['port'], 'int'],
  ['PROFILE', ['profile'], 'string'],
  ['LOG_LEVEL', ['logLevel'], 'string'],
  ['PUBLIC_BASE_URL', ['publicBaseUrl'], 'string'],
  ['REDIS_URL', ['redisUrl'], 'string'],
  ['REDIS_CLUSTER_NODES', ['redisClusterNodes'], 'list'],
  ['TRUSTED_PROXIES', ['trustedProxies'], 'list'],
  ['KEY_PEPPER', ['keys', 'pepper'], 'string'],
  ['KEY_PREVIOUS_PEPPERS', ['keys', 'previousPeppers'], 'list'],
  ['KEYS_FILE', ['keys', 'file'], 'string'],
  ['WEBHOOK_ENCRYPTION_KEY', ['webhooks', 'encryptionKey'], 'string'],
  ['WEBHOOK_PREVIOUS_ENCRYPTION_KEYS', ['webhooks', 'previousEncryptionKeys'], 'list'],
  ['AUDIT_LOG_FILE', ['audit', 'file'], 'string'],
  ['BACKEND', ['upstream', 'backend'], 'string'],
  ['OPS_HOST', ['ops', 'host'], 'string'],
  ['OPS_PORT', ['ops', 'port'], 'int'],
  ['ADMIN_TOKENS', ['admin', 'tokens'], 'json'],
  ['ADMIN_AUDIT_LOG_FILE', ['admin', 'auditFile'], 'string'],
];

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const segment of path.slice(0, -1)) {
    const next = node[segment];
    if (typeof next !== 'object' || next === null) node[segment] = {};
    node = node[segment] as Record<string, unknown>;
  }
  node[path[path.length - 1] as string] = value;
}

function envValue(name: string, raw: string, kind: EnvKind): unknown {
  if (kind === 'string') return raw;
  if (kind === 'list') return raw.split(',').map((item) => item.trim()).filter(Boolean);
  if (kind === 'json') {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      // The value may hold secrets someone pasted by mistake: it is not echoed.
      throw new ConfigError(`${name} must be JSON`);
    }
  }
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  return Number(raw);
}

/** The file's settings; undefined when an optional file does not exist (any other failure to read it stops the boot). */
function readConfigFile(path: string, optional: boolean): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (optional && (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${jsonSyntaxError(text, error)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ConfigError(`config file ${path} is not a JSON object`);
  return parsed as Record<string, unknown>;
}

/** Each backend's environment variables, as paths into its section. */
function backendEnv(registry: BackendRegistry): Array<[name: string, path: string[], kind: BackendEnvVar['kind']]> {
  return registry.flatMap((plugin) => plugin.env.map(({ name, path, kind }): [string, string[], BackendEnvVar['kind']] => [name, ['upstream', plugin.name, ...path], kind]));
}

/** Every environment variable loadConfig reads: CONFIG_FILE, the overrides and each backend's own. */
export function configEnvNames(registry: BackendRegistry): string[] {
  return ['CONFIG_FILE', ...[...ENV_OVERRIDES, ...backendEnv(registry)].map(([name]) => name)];
}

/**
 * Reads CONFIG_FILE (default config/gateway.json, optional when absent), applies the environment
 * on top and validates the result.
 */
export function loadConfig(registry: BackendRegistry, env: Env = process.env): GatewayConfig {
  const raw = readConfigFile(env.CONFIG_FILE ?? DEFAULT_CONFIG_FILE, env.CONFIG_FILE === undefined) ?? {};
  for (const [name, path, kind] of [...ENV_OVERRIDES, ...backendEnv(registry)]) {
    const value = env[name];
    if (value !== undefined && value !== '') setPath(raw, path, envValue(name, value, kind));
  }
  const upstream = raw.upstream;
  if (upstream && typeof upstream === 'object' && !('backend' in upstream)) {
    // One backend's section (from the file or its environment variables) names the backend.
    const sections = Object.keys(upstream);
    if (sections.length === 1) (upstream as Record<string, unknown>).backend = sections[0];
  }
  return parseConfig(raw, registry);
}
