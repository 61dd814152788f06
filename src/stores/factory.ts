/** Chooses the stores a deployment runs with: Redis when configured, else process memory. */
import { parseClusterSeed, type GatewayConfig } from '../config.js';
import { createMemoryStores } from './memory/index.js';
import { createRedisStores, type RedisStoresOptions } from './redis/index.js';
import type { Stores } from './types.js';

type StoreConfig = Pick<GatewayConfig, 'redisUrl' | 'redisClusterNodes' | 'keys'> & Partial<Pick<GatewayConfig, 'idempotency' | 'webhooks'>>;

function clusterNode(seed: string): { host: string; port: number } {
  // Checked at boot (config.ts); a seed that does not parse never gets here.
  return parseClusterSeed(seed) ?? { host: '127.0.0.1', port: 6379 };
}

/** What the Redis stores tell the process about the server (see RedisStoresOptions). */
export type StoreHearers = Pick<RedisStoresOptions, 'onWarning' | 'onConnectionError' | 'onDataLost'>;

/**
 * `onWarning` hears what is wrong with the Redis server's configuration (an evicting
 * maxmemory-policy, no persistence); `onConnectionError`, each error of a Redis client's
 * connection; `onDataLost`, a Redis found to have lost its data at a reconnection.
 */
export async function createStores(config: StoreConfig, hearers: StoreHearers = {}): Promise<Stores> {
  const acks = config.idempotency?.replicaAcks ?? 0;
  const replicaAcks = acks > 0 ? { replicas: acks, timeoutMs: config.idempotency?.replicaWaitMs ?? 100 } : undefined;
  const webhooks = config.webhooks;
  const webhookAdmission = webhooks
    ? { perAccount: webhooks.perAccountConcurrency, maxWaiting: webhooks.maxWaitingPerAccount, sweepAfterMs: webhooks.claimIdleMs }
    : undefined;
  if (config.redisClusterNodes && config.redisClusterNodes.length > 0) {
    return createRedisStores({ clusterNodes: config.redisClusterNodes.map(clusterNode), replicaAcks, ...hearers, webhookAdmission });
  }
  if (config.redisUrl) return createRedisStores({ url: config.redisUrl, replicaAcks, ...hearers, webhookAdmission });
  // Keys persist in a file so the operator CLI, another process, can issue them to a running gateway.
  return createMemoryStores({
    keysFile: config.keys.file,
    idempotencyMaxRecords: config.idempotency?.memoryMaxRecords,
    webhookAdmission,
  });
}

/** For the key CLI: the same key and webhook stores (the outbox's event counters too) the gateway uses. */
export async function createKeyStore(config: StoreConfig): Promise<Pick<Stores, 'keys' | 'webhooks' | 'webhookOutbox' | 'close'>> {
  return createStores(config);
}
