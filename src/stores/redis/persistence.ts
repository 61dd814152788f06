/**
 * Whether Redis keeps what the gateway writes across its own restart. With neither an append-only
 * file nor RDB save points a restart empties it: every API key (their clients get 401), every
 * idempotency record (a retried order runs again), the webhook events accepted but not yet
 * delivered, and the webhook sequence counters. Read like the eviction policy: INFO first, which a
 * managed Redis answers where it refuses CONFIG; what no node would say is reported as unknown.
 */
import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './connection.js';

type Persistence = 'kept' | 'nothing' | 'unknown';

/** The warning for the masters that persist nothing, or whose persistence cannot be read; undefined when all persist. */
export async function persistenceWarning(client: RedisClient): Promise<string | undefined> {
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  const found = await Promise.all(nodes.map(async (node) => ({ node, persistence: await persistenceOf(node) })));
  const where = (persistence: Persistence): string =>
    found
      .filter((each) => each.persistence === persistence)
      .map(({ node }) => `${node.options.host}:${node.options.port}`)
      .join(', ');
  const nothing = where('nothing');
  const unknown = where('unknown');
  if (!nothing && !unknown) return undefined;
  const said = [
    nothing && `Redis persists nothing at ${nothing} (no append-only file, no RDB save points)`,
    unknown && `Redis persistence is unknown at ${unknown} (no append-only file shown, and CONFIG GET save refused)`,
  ].filter(Boolean);
  return (
    `${said.join('; ')}: a Redis restart loses every API key (their clients get 401), the idempotency records (a retried order runs again), ` +
    'the webhook events not yet delivered and the webhook sequence counters; set appendonly yes with appendfsync everysec'
  );
}

/** An append-only file (INFO persistence's aof_enabled, else CONFIG GET appendonly) or any RDB save point keeps the data. */
async function persistenceOf(node: Redis): Promise<Persistence> {
  const info = await node.info('persistence').catch(() => '');
  const field = /^aof_enabled:(\d)/m.exec(info)?.[1];
  const aofEnabled = field === undefined ? (await configValue(node, 'appendonly')) === 'yes' : field === '1';
  if (aofEnabled) return 'kept';
  const savePoints = await configValue(node, 'save');
  if (savePoints === undefined) return 'unknown';
  return savePoints.trim() === '' ? 'nothing' : 'kept';
}

/** CONFIG GET's value; undefined where CONFIG is refused (renamed away, a managed Redis, an ACL). */
async function configValue(node: Redis, name: string): Promise<string | undefined> {
  const reply = await node.config('GET', name).catch(() => []);
  return reply[1];
}
