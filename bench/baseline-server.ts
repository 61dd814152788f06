/**
 * A baseline server for the benchmark, in its own process like the gateway: Fastify answering
 * GET paths with bodies serialised once (the exact bytes the gateway sends), optionally after one
 * EVALSHA of a trivial script against the benchmark's Redis: the least any gateway request costs.
 * With BASELINE_BATCH=1 its Redis writes are batched per turn of the event loop, as the gateway's
 * are (src/stores/redis/write-batches.ts); without, each command is its own write (a plain ioredis client).
 *
 * Env: BASELINE_PORT, BASELINE_BODIES (a JSON file: path → body text), BASELINE_REDIS_URL (absent:
 * bare), BASELINE_BATCH. Prints `listening <port>` once it serves.
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { WriteBatches } from '../src/stores/redis/write-batches.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const INCR_SCRIPT = "return redis.call('INCR', KEYS[1])";

const bodies = JSON.parse(readFileSync(String(process.env.BASELINE_BODIES), 'utf8')) as Record<string, string>;
const redisUrl = process.env.BASELINE_REDIS_URL;
const redis = redisUrl ? new Redis(redisUrl) : undefined;
const sha = redis ? String(await redis.script('LOAD', INCR_SCRIPT)) : '';

/** As the gateway's Redis connection does: the commands of one turn in writes of at most 16. */
const batches = process.env.BASELINE_BATCH === '1' && redis ? new WriteBatches(redis) : undefined;

const app = Fastify({ logger: false });
for (const [path, text] of Object.entries(bodies)) {
  const body = Buffer.from(text);
  app.get(path, redis
    ? async (_request, reply) => {
        batches?.beforeCommand();
        await redis.evalsha(sha, 1, 'bench:baseline');
        return reply.header('content-type', JSON_TYPE).send(body);
      }
    : (_request, reply) => {
        reply.header('content-type', JSON_TYPE).send(body);
      });
}
const port = Number(process.env.BASELINE_PORT ?? 0);
await app.listen({ host: '127.0.0.1', port });
process.stdout.write(`listening ${(app.server.address() as { port: number }).port}\n`);
process.on('SIGTERM', () => {
  void app.close().then(() => {
    redis?.disconnect();
    process.exit(0);
  });
});
