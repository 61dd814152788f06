/** Chooses the stores a deployment runs with: Redis when configured, else process memory. */
import type { GatewayConfig } from '../config.js';
import { createMemoryStores } from './memory/index.js';
import { createRedisStores } from './redis/index.js';
import type { Stores } from './types.js';

type StoreConfig = Pick<GatewayConfig, 'redisUrl' | 'redisClusterNodes' | 'keys'>;

function clusterNode(seed: string): { host: string; port: number } {
  const [host, port] = seed.replace(/^redis:\/\//, '').split(':');
  return { host: host || '127.0.0.1', port: Number(port ?? 6379) };
}

export async function createStores(config: StoreConfig): Promise<Stores> {
  if (config.redisClusterNodes && config.redisClusterNodes.length > 0) {
    return createRedisStores({ clusterNodes: config.redisClusterNodes.map(clusterNode) });
  }
  if (config.redisUrl) return createRedisStores({ url: config.redisUrl });
  // Keys persist in a file so the operator CLI, another process, can issue them to a running gateway.
  return createMemoryStores({ keysFile: config.keys.file });
}

/** For the key CLI: the same key store the gateway uses. */
export async function createKeyStore(config: StoreConfig): Promise<Pick<Stores, 'keys' | 'close'>> {
  return createStores(config);
}
