/**
 * The webhook outbox gauges while Redis is unreachable. They kept the last
 * value read, so a dashboard showed a healthy backlog through the outage. Now the depth and age are
 * left out of the scrape when the outbox cannot be read, and the time of the last read that worked
 * stays where it was, so an alert can tell how long the backlog has been unseen.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildOpsApp } from '../../src/ops/server.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { buildTestGateway } from '../helpers/gateway.js';
import { startRedisServer } from '../helpers/redis.js';

/** The value of a label-less sample, or undefined when the scrape has none. */
function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((entry) => entry.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

t.test('Redis stopped: the outbox depth and age are absent, not the last values read', async (t) => {
  const server = await startRedisServer();
  t.teardown(() => server.stop());
  const stores = await createRedisStores({ url: server.url, keyPrefix: 'logflood-outbox:' });
  const gw = await buildTestGateway({ stores });
  const ops = buildOpsApp(gw.app);
  t.teardown(async () => {
    await ops.close();
    await gw.close();
  });
  const scrape = async () => (await ops.inject({ method: 'GET', url: '/metrics' })).body;

  await stores.webhookOutbox.enqueue({ eventId: 'evt_waiting', accountId: 'acme', body: '{}', trace: {} });
  const before = await scrape();
  assert.equal(sample(before, 'gateway_webhook_outbox_depth'), 1, 'the waiting event is seen while Redis answers');
  assert.ok((sample(before, 'gateway_webhook_outbox_oldest_pending_age_seconds') ?? -1) >= 0);
  const lastRead = sample(before, 'gateway_webhook_outbox_last_read_timestamp_seconds');
  const errorsBefore = sample(before, 'gateway_store_errors_total{store="webhooks"}') ?? 0;

  await server.stop();
  const during = await scrape();
  assert.equal(sample(during, 'gateway_webhook_outbox_depth'), undefined, 'no depth while the outbox cannot be read');
  assert.equal(sample(during, 'gateway_webhook_outbox_oldest_pending_age_seconds'), undefined, 'no age while the outbox cannot be read');
  assert.ok(lastRead !== undefined && lastRead > 1_600_000_000, `the last read's time, in Unix seconds: ${lastRead}`);
  assert.equal(sample(during, 'gateway_webhook_outbox_last_read_timestamp_seconds'), lastRead, 'the last read that worked is still the one before the outage');
  // A counter is read as the scrape starts, before the gauges' read fails: the next scrape shows it.
  const next = await scrape();
  assert.equal(sample(next, 'gateway_webhook_outbox_depth'), undefined, 'still absent');
  assert.ok((sample(next, 'gateway_store_errors_total{store="webhooks"}') ?? 0) > errorsBefore, 'the failed read is counted as a store error');

  await server.restart();
  // The stores reconnect on their own (at most every second): the depth comes back with the first read that works.
  let after = await scrape();
  while (sample(after, 'gateway_webhook_outbox_depth') === undefined) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    after = await scrape();
  }
  assert.equal(sample(after, 'gateway_webhook_outbox_depth'), 0, 'the restarted server is empty');
  assert.ok((sample(after, 'gateway_webhook_outbox_last_read_timestamp_seconds') ?? 0) >= (lastRead ?? Infinity));
});
