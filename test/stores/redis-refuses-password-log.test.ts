/**
 * Redis restarted, or its password rotated on the server before the gateway's
 * REDIS_URL, while the gateway runs. Its clients reconnect about once a second and each attempt
 * fails (WRONGPASS), but the log said only that the store was unreachable (`Stream isn't
 * writeable`): the clients' own errors were kept for the failure at boot, never told after it, so
 * the operator looked at the network. Now the stores tell each one (onConnectionError, password
 * cut out), which the process logs once a kind and counts (src/server.ts, as wired here).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import { createRepeatedLog } from '../../src/repeated-log.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { startRedisServer } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const PASSWORD = 'planted-redis-Pa55word-77aa';

t.test('a Redis that refuses the password at reconnection is named in the log, without the password', async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  /** Sets the server's password and drops every other client, which connects (and authenticates) again. */
  const requirePassword = async (password: string, current?: string) => {
    const admin = new Redis({ host: '127.0.0.1', port: redis.port, password: current, lazyConnect: true });
    await admin.connect();
    await admin.config('SET', 'requirepass', password);
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal');
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    admin.disconnect();
  };
  await requirePassword(PASSWORD);

  const output: string[] = [];
  const log = pino({ level: 'info' }, { write: (text: string) => void output.push(text) }) as unknown as FastifyBaseLogger;
  const repeats = createRepeatedLog(log);
  const told: string[] = [];
  const stores = await createRedisStores({
    url: `redis://:${PASSWORD}@127.0.0.1:${redis.port}`,
    onConnectionError: (message: string) => {
      told.push(message);
      repeats.note('warn', 'Redis connection error', { error: message });
    },
  });
  t.teardown(() => stores.close());
  assert.equal(await stores.ping(), true);

  await requirePassword('rotated-on-the-server-first', PASSWORD);
  await waitFor(() => (told.filter((message) => /WRONGPASS/.test(message)).length >= 2 ? true : undefined), 8_000, 'the refusal told at each reconnection');
  assert.equal(await stores.ping(), false, 'the stores are unavailable meanwhile');
  repeats.flush();

  const lines = output.map((line) => JSON.parse(line) as Record<string, unknown>);
  const firsts = lines.filter((line) => line.log_summary !== true);
  assert.ok(firsts.some((line) => /WRONGPASS/.test(String(line.error))), 'the log names the refusal');
  assert.ok(firsts.length <= 2, `once a kind, not once per reconnection attempt: ${firsts.length} lines`);
  assert.equal(lines.reduce((sum, line) => sum + (line.log_summary === true ? Number(line.repeated) : 1), 0), told.length, 'every error counted');
  assert.ok(!output.join('').includes(PASSWORD), 'the password never reaches the log');
});
