/**
 * On FOSSBilling an order is its service: cancelling the service cancels the order, and
 * GET /v1/orders/{id} says so. Once active, an order is no longer "open", so the detector stopped
 * reading it, and the write's observe covered only the service: no order.status_changed was sent
 * for this change, whether made through the API or upstream.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { MemoryAuditLog } from '../../src/audit.js';
import { parseConfig, type ResolvedConfig } from '../../src/config.js';
import { KeyService } from '../../src/keys/key-service.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { BACKENDS } from '../../mappings/index.js';
import { FossbillingConfigSchema } from '../../mappings/fossbilling/config.js';
import { startFossbillingSimulator } from '../../simulators/fossbilling/server.js';
import { BASELINE_FIELD } from '../../src/webhooks/emitter.js';
import { fakeResolve, GENEROUS_LIMITS, issueTestKeys, TEST_PEPPER, TEST_WEBHOOK_KEY } from '../helpers/gateway.js';
import { call } from '../helpers/http.js';
import { eventually, startReceiver, verify, type ReceivedWebhook } from '../helpers/webhook-receiver.js';

t.test('FOSSBilling: an active order whose service is cancelled, then revoked, is announced each time', async (t) => {
  const simulator = await startFossbillingSimulator({ progress: { afterMs: 300 } });
  const parsed = parseConfig({
    profile: 'A', logLevel: 'warn', keys: { pepper: TEST_PEPPER }, doctor: { enabled: false }, rateLimits: GENEROUS_LIMITS,
    webhooks: { encryptionKey: TEST_WEBHOOK_KEY, allowPrivateTargets: true, pollIntervalMs: 150, workerIntervalMs: 30 },
    upstream: { backend: 'fossbilling' },
  }, BACKENDS);
  const section = FossbillingConfigSchema.parse({ url: simulator.url, apiToken: simulator.apiToken });
  const config = { ...parsed, upstream: { backend: 'fossbilling', fossbilling: section } } as ResolvedConfig;
  const stores = createMemoryStores();
  const app = await buildApp(config, { stores, audit: new MemoryAuditLog(), resolveHost: fakeResolve, backends: BACKENDS, runWebhooks: true });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const receiver = await startReceiver();
  t.teardown(async () => {
    await app.close();
    await simulator.close();
    await receiver.close();
  });
  const keys: Record<string, string> = {};
  await issueTestKeys(new KeyService(stores.keys, TEST_PEPPER), keys, {}, { acme: '1', beta: '2' });
  // Client 2 has no credit: its order waits for its invoice, then the simulator activates it.
  const key = keys['beta:all'] as string;
  const { secret } = (await call(base, 'PUT', '/v1/webhooks', { key, body: { url: receiver.url } })).json() as { secret: string };
  await eventually(async () => (await stores.webhooks.readSnapshot('beta'))[BASELINE_FIELD], 'first detector pass');

  const placed = await call(base, 'POST', '/v1/orders', { key, body: { product_id: '1', billing_cycle: 'monthly', hostname: 'follow.example.com' }, headers: { 'idempotency-key': randomUUID() } });
  assert.equal(placed.status, 201, placed.text);
  const orderId = (placed.json() as { id: string }).id;
  const orderEvent = (status: string) => (r: ReceivedWebhook) => r.event.type === 'order.status_changed' && r.event.data.id === orderId && r.event.data.status === status;
  await receiver.waitFor(orderEvent('active'), 'order active');
  const getOrder = async () => (await call(base, 'GET', `/v1/orders/${orderId}`, { key })).json();

  // Through the API.
  const cancelled = await call(base, 'POST', `/v1/services/${orderId}/actions`, { key, body: { action: 'cancel' }, headers: { 'idempotency-key': randomUUID() } });
  assert.equal(cancelled.status, 200, cancelled.text);
  const byApi = await receiver.waitFor(orderEvent('cancelled'), 'order.status_changed to cancelled (API)', 3_000);
  assert.deepEqual(byApi.event.data, await getOrder(), 'data is the order as GET shows it');

  // Upstream: staff revoke the cancellation in FOSSBilling.
  const order = simulator.state.orders.find((candidate) => candidate.id === Number(orderId));
  assert.ok(order);
  Object.assign(order, { status: 'active', canceled_at: null });
  await receiver.waitFor((r) => receiver.received.indexOf(r) > receiver.received.indexOf(byApi) && orderEvent('active')(r), 'order.status_changed back to active (upstream)', 3_000);
  assert.equal((await getOrder()).status, 'active');

  for (const delivery of receiver.received) verify(secret, delivery);
  const ids = receiver.received.filter((r) => r.event.type === 'order.status_changed').map((r) => r.headers['webhook-id']);
  assert.equal(ids.length, 3, `one event per change: ${receiver.received.map((r) => r.event.type).join(', ')}`);
  assert.equal(new Set(ids).size, 3);
});
