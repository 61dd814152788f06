/**
 * doctor's check of the Redis the gateway is configured with: what the gateway's start-up would say
 * of it (an evicting maxmemory-policy, no persistence, an unknown version) is a WARN; a Redis the
 * gateway could not start on (unreachable, too old, a database it refuses) a FAIL. Read by
 * connecting as the gateway does; nothing the gateway stores is changed.
 */
import type { DoctorCheck } from '../backend/backend.js';
import { ConfigError } from '../config.js';
import { createStores } from '../stores/factory.js';
import { RedisUnreachableError } from '../stores/redis/index.js';
import { unreachableLine } from '../startup/redis-unreachable.js';

const TITLE = 'Redis keeps what the gateway writes';

/** Undefined without Redis (the memory stores: nothing to check). */
export async function redisCheck(config: Parameters<typeof createStores>[0]): Promise<DoctorCheck | undefined> {
  if (!config.redisUrl && !config.redisClusterNodes?.length) return undefined;
  const warnings: string[] = [];
  try {
    const stores = await createStores(config, { onWarning: (warning) => warnings.push(warning) });
    await stores.close();
  } catch (error) {
    if (error instanceof RedisUnreachableError) return { id: 'redis', title: TITLE, status: 'fail', detail: unreachableLine(config, error), fix: 'start Redis or correct REDIS_URL / REDIS_CLUSTER_NODES' };
    if (error instanceof ConfigError) return { id: 'redis', title: TITLE, status: 'fail', detail: error.message, fix: 'see "Running in production" in the README' };
    throw error;
  }
  if (warnings.length === 0) return { id: 'redis', title: TITLE, status: 'pass', detail: 'no evicting maxmemory-policy; an append-only file or RDB save points on every master' };
  return {
    id: 'redis',
    title: TITLE,
    status: 'warn',
    detail: warnings.join('. '),
    fix: 'set maxmemory-policy noeviction and appendonly yes with appendfsync everysec (see "Running in production" in the README)',
  };
}

