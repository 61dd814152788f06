/**
 * Notices a Redis that lost its data under a running gateway (restarted without persistence,
 * flushed, replaced by an empty server): a marker, one key with a value of its own, is recorded at
 * start and read again each time the client connects anew. Gone, or another one (a process that
 * found it gone first recorded its own), the data went with it. Nothing on the request path: one
 * read per reconnection. A FLUSHALL with no reconnection after it goes unnoticed until the next one.
 */
import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import type { RedisClient, RedisConnection } from './connection.js';

/** Own hash tag: one key, on one node of a Redis Cluster. */
const MARKER_NAME = '{dataset}:marker';

export class DatasetMarker {
  /** The marker this process holds; undefined until one could be read (Redis refused the write at start). */
  private held: string | undefined;

  constructor(private readonly redis: RedisConnection) {}

  /** Holds the stored marker, recording one first where none is. Never throws: a marker not held is only a loss not noticed. */
  async hold(): Promise<void> {
    const key = this.redis.key(MARKER_NAME);
    // Read first: a Redis at its memory limit (noeviction) refuses the SET even where the key is there.
    const stored = await this.redis.run(async (client) => {
      const found = await client.get(key);
      if (found !== null || (await isReplica(client))) return found;
      await client.set(key, randomUUID(), 'NX');
      // Another process may have recorded its own first.
      return client.get(key);
    }).catch(() => null);
    // Unreadable (Redis away again): the one held stays, to be compared at the next reconnection.
    if (stored !== null) this.held = stored;
  }

  /** Whether the marker held is gone (the data with it); the stored one, recorded anew if need be, is held from now on. */
  async lost(): Promise<boolean> {
    const before = this.held;
    await this.hold();
    return before !== undefined && this.held !== undefined && this.held !== before;
  }
}

/**
 * A standalone URL naming a replica: a write there is refused with READONLY, which makes the client
 * connect again (see createClient), and at every reconnection the marker would be written again.
 * A cluster client sends the write to the key's master. INFO refused (an ACL): taken as a primary.
 */
async function isReplica(client: RedisClient): Promise<boolean> {
  if (client instanceof Cluster) return false;
  return /^role:slave/m.test(await client.info('replication').catch(() => ''));
}
