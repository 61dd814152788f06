/**
 * `webhooks.maxWaitingPerAccount` reaches the outbox the gateway opens
 * (src/stores/factory.ts), memory and Redis alike. The stores' own tests build the outbox with its
 * bound by hand: with the setting dropped on its way, every gateway ran with the default 10 000,
 * whatever the operator set.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { WebhookConfigSchema, type GatewayConfig } from '../../src/config.js';
import { createStores } from '../../src/stores/factory.js';
import { startRedisServer } from '../helpers/redis.js';

const entry = (eventId: string) => ({ eventId, accountId: 'acme', body: '{}', trace: {} });

t.test("the configured line bound is the outbox's, memory and Redis", async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  // The stores read only keys.file (none: in memory).
  const keys = {} as GatewayConfig['keys'];
  const webhooks = WebhookConfigSchema.parse({ perAccountConcurrency: 1, maxWaitingPerAccount: 2 });
  for (const redisUrl of [undefined, redis.url]) {
    const stores = await createStores({ redisUrl, redisClusterNodes: undefined, keys, webhooks });
    try {
      const results = [];
      for (const id of ['evt_1', 'evt_2', 'evt_3', 'evt_4']) results.push((await stores.webhookOutbox.enqueue(entry(id))).outcome);
      assert.deepEqual(results, ['queued', 'queued', 'queued', 'full'], `${stores.kind}: one up for delivery, two waiting, the fourth refused`);
    } finally {
      await stores.close();
    }
  }
});
