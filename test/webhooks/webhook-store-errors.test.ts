/**
 * `gateway_store_errors_total{store="webhooks"}` (README, Operations: "store calls that found the
 * store unreachable", `store` one of rate_limits, idempotency, keys, webhooks) counts the webhook
 * side's failures to reach the store: the delivery worker's outbox claims and the outbox read of
 * each scrape. Without it, an outbox the instances cannot reach (deliveries stalled, the outbox
 * gauges frozen at their last value) shows on no store counter while no request comes in.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildOpsApp } from '../../src/ops/server.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { StoreUnavailableError } from '../../src/stores/types.js';
import { buildTestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/webhook-receiver.js';

const webhookStoreErrors = (text: string): number => Number(/^gateway_store_errors_total\{store="webhooks"\} (\S+)$/m.exec(text)?.[1] ?? 'NaN');

t.test('the delivery worker and the scrape count the outbox they cannot reach', async (t) => {
  const stores = createMemoryStores();
  const down = async (): Promise<never> => {
    throw new StoreUnavailableError('store down (test)');
  };
  Object.assign(stores.webhookOutbox, { claim: down });
  const gw = await buildTestGateway({ stores, runWebhooks: true, config: { webhooks: { allowPrivateTargets: true, workerIntervalMs: 20 } } });
  const ops = buildOpsApp(gw.app);
  t.teardown(async () => {
    await ops.close();
    await gw.close();
  });
  const scrape = async () => (await ops.inject({ method: 'GET', url: '/metrics' })).body;
  // The worker polls every 20 ms: its failed claims show without any scrape reading the outbox.
  const counted = await eventually(async () => {
    const errors = webhookStoreErrors(await scrape());
    return errors >= 3 ? errors : undefined;
  }, 'the failed claims counted');
  assert.ok(counted >= 3, String(counted));
});

t.test("a scrape's failed outbox read is counted too", async (t) => {
  const stores = createMemoryStores();
  Object.assign(stores.webhookOutbox, {
    backlog: async (): Promise<never> => {
      throw new StoreUnavailableError('store down (test)');
    },
  });
  // The worker is not run: only the scrapes read the outbox.
  const gw = await buildTestGateway({ stores });
  const ops = buildOpsApp(gw.app);
  t.teardown(async () => {
    await ops.close();
    await gw.close();
  });
  await ops.inject({ method: 'GET', url: '/metrics' });
  // A scrape's counters are read before its own outbox read fails: the next one shows it.
  assert.equal(webhookStoreErrors((await ops.inject({ method: 'GET', url: '/metrics' })).body), 1);
});
