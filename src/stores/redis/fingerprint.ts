/**
 * A setting every process sharing the store must have alike (the key pepper, the webhook sealing
 * key), held as a fingerprint, never the secret: recorded once one is known to be right, and each
 * later process learns whether it has the same. One key, its own hash tag (Redis Cluster works).
 */
import type { RedisConnection } from './connection.js';
import { LuaScript } from './lua-script.js';

/**
 * Whether `fingerprint` is the one stored. None stored: with `record`, this one is recorded (unless
 * another process's won the race) and compared; without, null. The previous release never recorded
 * one: only a process that knows its setting fits the records already stored may record it.
 * One of `previous` stored (the setting was rotated, and that was the one before): this one takes
 * its place, and true.
 */
export async function holdsFingerprint(redis: RedisConnection, name: string, fingerprint: string, record: boolean, previous: readonly string[] = []): Promise<boolean | null> {
  const key = redis.key(name);
  // Read first: a Redis at its memory limit (noeviction) refuses the SET even where the key is there.
  let stored = await redis.run(async (client) => {
    const found = await client.get(key);
    if (found !== null || !record) return found;
    return (await client.set(key, fingerprint, 'NX')) === 'OK' ? fingerprint : client.get(key);
  });
  if (stored !== null && stored !== fingerprint && previous.includes(stored)) {
    stored = (await redis.evalScript(TAKE_OVER, [key], [stored, fingerprint])) as string | null;
  }
  return stored === null ? null : stored === fingerprint;
}

const TAKE_OVER = LuaScript.load('fingerprint-take-over');
