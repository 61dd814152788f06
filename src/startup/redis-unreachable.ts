/**
 * Redis not there at boot: the stores wait their connect time (reconnecting meanwhile, for a Redis
 * that starts beside the gateway), then the process stops with EX_UNAVAILABLE and one line naming
 * the setting; the orchestrator's restart is the longer wait. Neither a stack trace nor the URL's
 * password (nor its query, where ioredis also reads one) reaches the output.
 */
import type { GatewayConfig } from '../config.js';
import { RedisUnreachableError } from '../stores/redis/index.js';
import { createStores, type StoreHearers } from '../stores/factory.js';
import type { Stores } from '../stores/types.js';

/** sysexits.h: a service the process needs is unavailable (the key CLI exits so too). */
export const EX_UNAVAILABLE = 69;

type StoreConfig = Parameters<typeof createStores>[0];

/** createStores, or the process stops with EX_UNAVAILABLE when Redis does not answer in time. */
export async function createStoresOrExit(config: StoreConfig, hearers: StoreHearers = {}): Promise<Stores> {
  try {
    return await createStores(config, hearers);
  } catch (error) {
    if (!(error instanceof RedisUnreachableError)) throw error;
    process.stderr.write(`reseller-gateway: ${unreachableLine(config, error)}\n`);
    process.exit(EX_UNAVAILABLE);
  }
}

export function unreachableLine(config: Pick<GatewayConfig, 'redisUrl' | 'redisClusterNodes'>, error: RedisUnreachableError): string {
  const nodes = config.redisClusterNodes ?? [];
  const setting = nodes.length > 0 ? `REDIS_CLUSTER_NODES (${nodes.map(withoutPassword).join(',')})` : `REDIS_URL (${withoutPassword(config.redisUrl ?? '')})`;
  const name = nodes.length > 0 ? 'REDIS_CLUSTER_NODES' : 'REDIS_URL';
  const reason = error.lastError ? ` (last error: ${error.lastError})` : '';
  return `Redis unreachable: ${setting} did not answer within ${error.waitedMs} ms${reason}; start Redis or correct ${name}`;
}

/**
 * The address with its password and query replaced, written from the parsed URL: the parser writes
 * the password escaped (`p%40ss`), which the text of REDIS_URL (`p@ss`) need not hold, and ioredis
 * also takes a password from the query (`?password=…`).
 */
function withoutPassword(address: string): string {
  try {
    const url = new URL(address);
    // A cluster seed (`redis-a:7000`) parses as a scheme and a path: it holds neither.
    if (url.password === '' && url.search === '') return address;
    const user = url.username || url.password ? `${url.username}${url.password ? ':[redacted]' : ''}@` : '';
    return `${url.protocol}//${user}${url.host}${url.pathname}${url.search ? '?[redacted]' : ''}`;
  } catch {
    // A bare host:port seed holds no password.
    return address;
  }
}
