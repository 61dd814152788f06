/**
 * The oldest Redis the stores run on. Everything they send is Redis 6.0 or older (SET KEEPTTL is
 * 6.0) but the webhook outbox's claim, XAUTOCLAIM, which came with 6.2.0: on 6.0 every claim fails
 * (`ERR unknown command`) while the rest works, so an older server is refused at start rather than
 * found by the first webhook. Valkey (7.2 on) reports in redis_version the Redis it is compatible with.
 */
import { Cluster, type Redis } from 'ioredis';
import { ConfigError } from '../../config.js';
import type { RedisClient } from './connection.js';

const MINIMUM_REDIS_VERSION = '6.2.0';

const NEEDED = `Redis ${MINIMUM_REDIS_VERSION} or later (or any Valkey), for XAUTOCLAIM (the webhook outbox)`;

/**
 * Throws ConfigError when a server (any master of a cluster) is older than MINIMUM_REDIS_VERSION;
 * answers a warning when one does not say its version.
 */
export async function checkServerVersion(client: RedisClient): Promise<string | undefined> {
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  let unknown = false;
  for (const node of nodes) {
    const version = await serverVersion(node);
    if (version === undefined) {
      unknown = true;
    } else if (isOlder(version, MINIMUM_REDIS_VERSION)) {
      const { host, port } = node.options;
      throw new ConfigError(`Redis ${version} at ${host}:${port} is older than the gateway needs: ${NEEDED}; upgrade it`);
    }
  }
  if (unknown) return `Redis version unknown (neither INFO server nor HELLO answered it): the gateway needs ${NEEDED}`;
  return undefined;
}

/**
 * INFO server's `redis_version`; where INFO is refused (a user without @dangerous), HELLO's
 * `version` (HELLO without arguments: 6.2 on, and asks nothing of the connection's protocol).
 */
async function serverVersion(node: Redis): Promise<string | undefined> {
  const info = await node.info('server').catch(() => '');
  const field = /^redis_version:(\S+)/m.exec(info)?.[1];
  if (field) return field;
  const hello = (await node.call('HELLO').catch(() => [])) as unknown[];
  const at = Array.isArray(hello) ? hello.indexOf('version') : -1;
  const version = at >= 0 ? hello[at + 1] : undefined;
  return typeof version === 'string' && version !== '' ? version : undefined;
}

function isOlder(version: string, than: string): boolean {
  const [have, need] = [version, than].map((each) => each.split('.').map((part) => Number.parseInt(part, 10) || 0));
  for (let index = 0; index < 3; index += 1) {
    const difference = (have?.[index] ?? 0) - (need?.[index] ?? 0);
    if (difference !== 0) return difference < 0;
  }
  return false;
}
