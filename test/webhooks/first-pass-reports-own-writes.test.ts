/**
 * Changes made after the webhook endpoint was set, before the change detector's first pass
 * over the account. That pass is a baseline: it records what it finds without reporting it (history
 * is not news). But an order placed through the gateway once the endpoint was set, and activated
 * upstream before that pass, was swallowed by it: the integrator heard order.created and never
 * order.status_changed (nor its service's service.status_changed). The same for a service action
 * made through the gateway: a later change of that service, before the first pass, went unheard.
 * What happened before the endpoint was set (or while it, or the account, was disabled) stays
 * unreported. On memory and on Redis stores.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import pino from 'pino';
import { createWhmcsBackend } from '../../mappings/whmcs/backend.js';
import { WhmcsConfigSchema } from '../../mappings/whmcs/config.js';
import { whmcsSimulatorConfig } from '../../simulators/whmcs/sandbox.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { ChangeDetector } from '../../src/webhooks/detector.js';
import { WebhookEvents } from '../../src/webhooks/emitter.js';
import { bearer } from '../helpers/gateway.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';
import { eventually, startReceiver } from '../helpers/webhook-receiver.js';
import { buildAdminGateway } from '../admin/helpers.js';

/** The app's own detector never runs (an hour's interval): the test runs the passes. */
const WEBHOOKS = { allowPrivateTargets: true, workerIntervalMs: 20, pollIntervalMs: 3_600_000 };

let redis: RedisServer;
t.before(async () => {
  redis = await startRedisServer();
});
t.teardown(() => redis.stop());

for (const storesKind of ['memory', 'redis'] as const) t.test(`${storesKind} stores`, async (t) => {
  const setUp = async (t: Test, accountId: 'acme' | 'beta', profile: 'A' | 'B' = 'A') => {
    const receiver = await startReceiver();
    const stores = storesKind === 'memory' ? createMemoryStores() : await createRedisStores({ url: redis.url, keyPrefix: `firstpass-${randomUUID()}:` });
    const gw = await buildAdminGateway({ runWebhooks: true, profile, stores, config: { webhooks: WEBHOOKS } });
    t.teardown(async () => {
      await gw.close();
      await receiver.close();
    });
    const log = pino({ level: 'silent' });
    const backend = createWhmcsBackend(WhmcsConfigSchema.parse(whmcsSimulatorConfig(gw.simulator)));
    const events = new WebhookEvents(gw.stores.webhooks, gw.stores.webhookOutbox, log);
    const detector = new ChangeDetector({ backend, keys: gw.stores.keys, store: gw.stores.webhooks, events, pollIntervalMs: 60_000, log });
    const headers = { ...bearer(gw.keys[`${accountId}:all`]), 'content-type': 'application/json' };
    const put = async () => {
      const answer = await gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers, payload: { url: receiver.url } });
      assert.equal(answer.statusCode, 200, answer.body);
    };
    const placeOrder = async (hostname: string) => {
      const answer = await gw.app.inject({
        method: 'POST',
        url: '/v1/orders',
        headers: { ...headers, 'idempotency-key': randomUUID() },
        payload: { product_id: '1', billing_cycle: 'monthly', config_options: { '1': '11' }, hostname },
      });
      assert.equal(answer.statusCode, 201, answer.body);
      const order = answer.json() as { id: string; status: string; service_ids: string[] };
      assert.equal(order.status, 'pending');
      return order;
    };
    /** Staff accept the order in WHMCS: it and its services become active. */
    const activate = (orderId: string) => {
      const order = gw.simulator.state.orders.find((candidate) => candidate.id === Number(orderId));
      assert.ok(order);
      order.status = 'Active';
      for (const service of gw.simulator.state.services) if (service.orderId === order.id) service.status = 'Active';
    };
    /** Every status event delivered to the receiver so far, once the worker has sent all that was queued, as `type id status`. */
    const delivered = async (): Promise<string[]> => {
      await eventually(async () => {
        const { entries } = await gw.stores.webhooks.listDeliveries(accountId, 0, 100);
        return entries.every((entry) => entry.state !== 'pending');
      }, 'every queued event sent');
      return receiver.received.flatMap(({ event }) => (event.type.endsWith('status_changed') ? [`${event.type} ${event.data.id} ${event.data.status}`] : []));
    };
    return { gw, detector, put, placeOrder, activate, delivered, headers };
  };

  t.test('an order placed after the endpoint was set and activated before the first pass is reported; one placed before is not', async (t) => {
    const { detector, put, placeOrder, activate, delivered } = await setUp(t, 'beta');
    // Placed with no endpoint set: its state is recorded all the same (the write observes it).
    const before = await placeOrder('before.example.com');
    await put();
    const after = await placeOrder('after.example.com');
    activate(before.id);
    activate(after.id);
    await detector.tick();
    assert.deepEqual(
      (await delivered()).sort(),
      [`order.status_changed ${after.id} active`, `service.status_changed ${after.service_ids[0]} active`],
      'the changes after the endpoint was set, and only those (the earlier order\'s and the seed data are history)',
    );
    await detector.tick();
    assert.equal((await delivered()).length, 2, 'reported once');
  });

  t.test('an order placed after the endpoint was set, pending at the first pass, activated after it', async (t) => {
    const { detector, put, placeOrder, activate, delivered } = await setUp(t, 'beta');
    await put();
    const order = await placeOrder('later.example.com');
    await detector.tick();
    assert.deepEqual(await delivered(), []);
    activate(order.id);
    await detector.tick();
    assert.deepEqual((await delivered()).sort(), [`order.status_changed ${order.id} active`, `service.status_changed ${order.service_ids[0]} active`]);
  });

  t.test('a service suspended through the gateway and unsuspended by staff before the first pass', async (t) => {
    const { gw, detector, put, delivered, headers } = await setUp(t, 'acme', 'B');
    const target = gw.simulator.state.services.find((service) => service.clientId === 1 && service.status === 'Active');
    assert.ok(target, 'an active service of client 1');
    await put();
    const suspended = await gw.app.inject({ method: 'POST', url: `/v1/services/${target.id}/actions`, headers: { ...headers, 'idempotency-key': randomUUID() }, payload: { action: 'suspend' } });
    assert.equal(suspended.statusCode, 200, suspended.body);
    target.status = 'Active';
    await detector.tick();
    assert.deepEqual(await delivered(), [`service.status_changed ${target.id} suspended`, `service.status_changed ${target.id} active`]);
  });

  for (const how of ['the operator', 'a PUT'] as const) t.test(`an endpoint disabled, then enabled by ${how}: what changed meanwhile is not reported, what changed since is`, async (t) => {
    const { gw, detector, put, placeOrder, activate, delivered } = await setUp(t, 'beta');
    await put();
    await detector.tick();
    const url = (await gw.stores.webhooks.get('beta'))?.url as string;
    await gw.stores.webhooks.disable('beta', url, 'gone');
    const meanwhile = await placeOrder('meanwhile.example.com');
    if (how === 'a PUT') await put();
    else assert.equal((await gw.admin('POST', '/admin/v1/accounts/beta/webhook/enable')).statusCode, 200);
    const since = await placeOrder('since.example.com');
    activate(meanwhile.id);
    activate(since.id);
    await detector.tick();
    const events = await delivered();
    assert.deepEqual(events.sort(), [`order.status_changed ${since.id} active`, `service.status_changed ${since.service_ids[0]} active`], 'not the order placed while disabled (W9)');
  });

  t.test('an account disabled, then enabled: what changed while it was disabled is not reported', async (t) => {
    const { gw, detector, put, placeOrder, activate, delivered } = await setUp(t, 'beta');
    await put();
    const order = await placeOrder('paused.example.com');
    assert.equal((await gw.admin('POST', '/admin/v1/accounts/beta/disable')).statusCode, 200);
    await detector.tick();
    activate(order.id);
    assert.equal((await gw.admin('POST', '/admin/v1/accounts/beta/enable')).statusCode, 200);
    await detector.tick();
    assert.deepEqual(await delivered(), []);
  });
});
