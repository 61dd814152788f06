/**
 * A setting every process sharing the store must have alike (the key pepper, the webhook sealing
 * key), held as a fingerprint, never the secret: the first process to ask records its own, and
 * each later one learns whether it has the same. One key, its own hash tag (Redis Cluster works).
 */
import type { RedisConnection } from './connection.js';

export async function holdsFingerprint(redis: RedisConnection, name: string, fingerprint: string): Promise<boolean> {
  const key = redis.key(name);
  // Read first: a Redis at its memory limit (noeviction) refuses the SET even where the key is there.
  const stored = await redis.run(async (client) => (await client.get(key)) ?? ((await client.set(key, fingerprint, 'NX')) === 'OK' ? fingerprint : client.get(key)));
  return stored === fingerprint;
}
