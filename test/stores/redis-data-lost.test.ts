/**
 * A Redis that comes back empty under a running gateway (restarted without persistence, flushed,
 * replaced) has taken every API key, idempotency record and outbox event with it. The stores notice
 * it when they connect again (a marker written at start is gone) and say it once; the gateway
 * process logs it at error and counts it in gateway_redis_data_lost_total for an alert to fire.
 * A reconnection to a Redis that kept its data says nothing.
 */
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import t from 'tap';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { startGateway } from '../helpers/gateway-process.js';
import { startRedisServer } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

/** Drops every client connection and waits until the stores' own is back (the admin's is not counted). */
async function reconnect(admin: Redis): Promise<void> {
  await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
  await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
  await waitFor(async () => (Number(/^connected_clients:(\d+)/m.exec(await admin.info('clients'))?.[1]) >= 3 ? true : undefined), 10_000, 'the stores connected again');
}

t.test('the stores: a reconnection that kept the data says nothing; a Redis that came back empty is said once', async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const lost: string[] = [];
  const stores = await createRedisStores({ url: redis.url, onDataLost: (message) => lost.push(message) });
  t.teardown(() => stores.close());
  const admin = new Redis(redis.url);
  t.teardown(() => admin.disconnect());

  await reconnect(admin);
  // The check runs on the reconnection; a later read proves it had its turn.
  await stores.ping();
  assert.deepEqual(lost, [], 'the data is still there');

  await admin.flushall();
  await reconnect(admin);
  await waitFor(() => (lost.length > 0 ? true : undefined), 10_000, 'the loss said');
  assert.equal(lost.length, 1);
  assert.match(lost[0] ?? '', /Redis lost its data/);
  assert.match(lost[0] ?? '', /API keys/);

  await reconnect(admin);
  await stores.ping();
  assert.equal(lost.length, 1, 'said once: the marker found gone is written again');
});

t.test('the gateway process: a Redis restarted empty is logged at error and counted in gateway_redis_data_lost_total', async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const gateway = await startGateway(t, {}, { REDIS_URL: redis.url });
  // The banner names it (startGateway waits for the banner; the listener's own log line may come later).
  const opsAddress = /ops \(metrics, probes\):\s+(http:\/\/\S+)/.exec(gateway.output())?.[1];
  assert.ok(opsAddress, gateway.output());
  const counted = async (): Promise<number | undefined> => {
    const text = await (await fetch(`${opsAddress}/metrics`)).text();
    const value = /^gateway_redis_data_lost_total (\d+)$/m.exec(text)?.[1];
    return value === undefined ? undefined : Number(value);
  };
  assert.equal(await counted(), 0, 'exposed at 0 from the start');

  await redis.restart();
  const line = await waitFor(() => gateway.output().split('\n').find((each) => each.includes('Redis lost its data')), 20_000, 'the error line');
  assert.match(line, /"level":50/);
  assert.equal(await waitFor(async () => ((await counted()) === 1 ? 1 : undefined), 10_000, 'the count'), 1);
});
