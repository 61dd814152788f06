/**
 * A write's event and the detector's observation of the same resource meet: the write read its
 * order (or service) before the detector read it in a later state and recorded that. The write's
 * older read must not be reported as a change back ("order.status_changed" to pending after
 * "order.created" active), to be reported forward again by the next pass.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import pino from 'pino';
import { createFossbillingBackend } from '../../mappings/fossbilling/backend.js';
import { FossbillingConfigSchema } from '../../mappings/fossbilling/config.js';
import type { Backend } from '../../src/backend/backend.js';
import type { KeyStore } from '../../src/stores/types.js';
import { startFossbillingSimulator } from '../../simulators/fossbilling/server.js';
import { ChangeDetector } from '../../src/webhooks/detector.js';
import { WebhookEvents } from '../../src/webhooks/emitter.js';
import { buildTestGateway } from '../helpers/gateway.js';

async function setUp(t: Test, profile: 'A' | 'B', accountId: string) {
  const simulator = await startFossbillingSimulator();
  const real = createFossbillingBackend(FossbillingConfigSchema.parse({ url: simulator.url, apiToken: simulator.apiToken }));
  /** Runs between the backend's answer and the handler's event: another instance's detector pass. */
  let meanwhile: (() => Promise<void>) | null = null;
  const backend: Backend = Object.create(real);
  backend.placeOrder = async (...args) => {
    const order = await real.placeOrder(...args);
    await meanwhile?.();
    return order;
  };
  backend.runServiceAction = async (...args) => {
    const result = await real.runServiceAction(...args);
    await meanwhile?.();
    return result;
  };
  const gw = await buildTestGateway({ backend, profile });
  t.teardown(async () => {
    await gw.close();
    await simulator.close();
  });
  const key = gw.keys[`${accountId}:all`] as string;
  const inject = (method: 'PUT' | 'POST', url: string, payload: unknown) =>
    gw.app.inject({ method, url, payload: payload as object, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() } });
  assert.equal((await inject('PUT', '/v1/webhooks', { url: 'https://hooks.example.com/in' })).statusCode, 200);
  const log = pino({ level: 'silent' });
  const events = new WebhookEvents(gw.stores.webhooks, gw.stores.webhookOutbox, log);
  const account = (await gw.stores.keys.listAccounts()).find((candidate) => candidate.id === accountId);
  assert.ok(account);
  const keys = { listAccounts: async () => [account] } as unknown as KeyStore;
  const detector = new ChangeDetector({ backend: real, keys, store: gw.stores.webhooks, events, pollIntervalMs: 60_000, log });
  await detector.tick();
  /** Every event queued for the account so far (the app's worker may have delivered some), oldest first, as `type id status`. */
  const queued = async (): Promise<string[]> => {
    const { entries } = await gw.stores.webhooks.listDeliveries(accountId, 0, 100);
    return entries.reverse().flatMap((entry) => {
      const { type, data } = JSON.parse(entry.body) as { type: string; data: { id: string; status: string } };
      return type === 'webhook.test' ? [] : [`${type} ${data.id} ${data.status}`];
    });
  };
  return { simulator, inject, detector, queued, setMeanwhile: (work: () => Promise<void>) => (meanwhile = work) };
}

t.test('an order placed through the API, activated and seen by the detector before the write announces it', async (t) => {
  // Client 2 has no credit: its order is placed pending, awaiting payment.
  const { simulator, inject, detector, queued, setMeanwhile } = await setUp(t, 'A', 'beta');
  setMeanwhile(async () => {
    // Staff (or the billing system's automation) activate it; the detector reads it then.
    const placed = simulator.state.orders.at(-1);
    assert.ok(placed);
    placed.status = 'active';
    await detector.tick();
  });
  const answer = await inject('POST', '/v1/orders', { product_id: '1', billing_cycle: 'monthly', hostname: 'older.example.com' });
  assert.equal(answer.statusCode, 201, answer.body);
  const id = (answer.json() as { id: string }).id;
  await detector.tick();
  const orderEvents = (await queued()).filter((event) => event.startsWith('order.'));
  assert.deepEqual(orderEvents, [`order.created ${id} active`], 'created once, and no change back to pending, then forward again');
});

t.test('a service action whose result the detector has already seen overtaken', async (t) => {
  const { simulator, inject, detector, queued, setMeanwhile } = await setUp(t, 'B', 'acme');
  const target = simulator.state.orders.find((order) => order.client_id === 1 && order.status === 'active');
  assert.ok(target, 'an active service of client 1');
  const id = String(target.id);
  setMeanwhile(async () => {
    // Suspended through the API; staff cancel it at once, and the detector reads that.
    Object.assign(target, { status: 'canceled', canceled_at: '2026-01-01 10:00:00' });
    await detector.tick();
  });
  const answer = await inject('POST', `/v1/services/${id}/actions`, { action: 'suspend' });
  assert.equal(answer.statusCode, 200, answer.body);
  await detector.tick();
  const serviceEvents = (await queued()).filter((event) => event.startsWith(`service.status_changed ${id} `));
  // Cancelled is reported once, and is the last word (as GET says): no "suspended" after it, then "cancelled" again.
  assert.deepEqual(serviceEvents.filter((event) => event.endsWith(' cancelled')), [`service.status_changed ${id} cancelled`], serviceEvents.join(', '));
  assert.equal(serviceEvents.at(-1), `service.status_changed ${id} cancelled`, serviceEvents.join(', '));
});
