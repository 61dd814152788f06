/**
 * FOSSBilling's `order/cancel` ends the service at once (Order/Service.php cancelFromOrder: status
 * `canceled`), and can fail after it did (its onAfterAdminOrderCancel hooks run after the store), or
 * its answer can be lost. The retry with the same key read the service, saw it cancelled, and still
 * answered 503 outcome_unknown ("not visible in the service's state"), every time, until the key went
 * stale (410 in profile A): a cancellation that is plainly there could never be confirmed. A cancelled
 * service is the effect of `cancel` whatever the backend (a scheduled one shows no status change,
 * so an active service still proves nothing).
 */
import assert from 'node:assert/strict';
import t, { type Test } from 'tap';
import { createMemoryStores } from '../../../src/stores/memory/index.js';
import { bearer, buildTestGateway } from '../../helpers/gateway.js';
import { createFossbillingBackend } from '../../../mappings/fossbilling/backend.js';
import { FossbillingConfigSchema } from '../../../mappings/fossbilling/config.js';
import { createFossbillingSeed, startFossbillingSimulator } from '../../../simulators/fossbilling/server.js';

/** A gateway over the FOSSBilling simulator with a clock to move, and one cancel of service 1 under `key`. */
async function cancelling(t: Test, key: string) {
  const sim = await startFossbillingSimulator({ seed: createFossbillingSeed });
  const clock = { now: Date.UTC(2026, 10, 22, 9, 0, 0) };
  const gw = await buildTestGateway({
    backend: createFossbillingBackend(FossbillingConfigSchema.parse({ url: sim.url, apiToken: sim.apiToken })),
    stores: createMemoryStores({ now: () => clock.now }),
  });
  t.teardown(async () => {
    await gw.close();
    await sim.close();
  });
  const cancel = () =>
    gw.app.inject({
      method: 'POST',
      url: '/v1/services/1/actions',
      headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json', 'idempotency-key': key },
      payload: JSON.stringify({ action: 'cancel' }),
    });
  const cancelsSent = () => sim.calls.filter((call) => call.method === 'order/cancel').length;
  return { sim, clock, cancel, cancelsSent };
}

t.test('FOSSBilling: a cancel that took effect but failed its answer is confirmed by the retry, not sent again', async (t) => {
  const { sim, clock, cancel, cancelsSent } = await cancelling(t, 'cancel-lost');
  sim.inject({ kind: 'error_after_effect', method: 'order/cancel', times: 1 });
  const failed = await cancel();
  assert.equal(failed.statusCode, 502, failed.body);
  assert.equal(sim.state.orders.find((order) => order.id === 1)?.status, 'canceled', 'the cancel took effect');

  clock.now += 10 * 60_000;
  const retry = await cancel();
  assert.equal(retry.statusCode, 200, retry.body);
  assert.equal(retry.json().service.status, 'cancelled');
  assert.equal(cancelsSent(), 1);
});

t.test('FOSSBilling: a cancel whose answer was lost and that did not take effect still proves nothing', async (t) => {
  const { sim, clock, cancel, cancelsSent } = await cancelling(t, 'cancel-unknown');
  sim.inject({ kind: 'http500', method: 'order/cancel', times: 1 });
  assert.equal((await cancel()).statusCode, 502);
  clock.now += 10 * 60_000;
  const retry = await cancel();
  assert.equal(retry.statusCode, 503, retry.body);
  assert.equal(retry.json().reason, 'outcome_unknown');
  assert.equal(cancelsSent(), 1);
});
