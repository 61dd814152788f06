/**
 * Webhooks end to end: a gateway with the WHMCS simulator moving state on its own, a real receiving
 * HTTP server, and every delivery verified with the official `standardwebhooks` library.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { startWhmcsSimulator, type WhmcsSimulator } from '../../simulators/whmcs/server.js';
import { parseTraceparent } from '../../src/ops/trace.js';
import { BASELINE_FIELD } from '../../src/webhooks/emitter.js';
import { EVENT_TYPES, eventPayloadSchema, type EventType } from '../../src/webhooks/events.js';
import { buildTestGateway, type TestGateway } from '../helpers/gateway.js';
import { call } from '../helpers/http.js';
import { eventually, startReceiver, verify, type Receiver } from '../helpers/webhook-receiver.js';

/** Compressed: the real schedule spans a day. */
const WEBHOOKS = { allowPrivateTargets: true, pollIntervalMs: 150, workerIntervalMs: 30, retryScheduleMs: [0, 100, 150, 200, 250] };

t.test('webhook delivery end to end', async (t) => {
  let simulator: WhmcsSimulator;
  let gw: TestGateway;
  let base: string;
  let key: string;
  let receiver: Receiver;

  t.before(async () => {
    simulator = await startWhmcsSimulator({ progress: { afterMs: 400 } });
    gw = await buildTestGateway({ simulator, runWebhooks: true, config: { webhooks: WEBHOOKS } });
    base = await gw.app.listen({ host: '127.0.0.1', port: 0 });
    key = gw.keys['acme:all'] as string;
    receiver = await startReceiver();
  });
  t.teardown(async () => {
    await gw.close();
    await simulator.close();
    await receiver.close();
  });

  const setUrl = async (url: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
    const set = await call(base, 'PUT', '/v1/webhooks', { key, body: { url, ...extra }, headers });
    assert.equal(set.status, 200, set.text);
    return set.json() as { secret?: string; url: string };
  };
  const webhook = async () => (await call(base, 'GET', '/v1/webhooks', { key })).json();

  t.test('setting a URL delivers a signed webhook.test; an order delivers order.created, then the status changes', async () => {
    const { secret } = await setUrl(receiver.url);
    assert.ok(secret);
    const test = await receiver.waitFor((r) => r.event.type === 'webhook.test', 'webhook.test');
    const payload = { id: test.headers['webhook-id'], api_version: 'v1', type: 'webhook.test', timestamp: test.event.timestamp, data: { url: receiver.url }, sequence: 1 };
    assert.deepEqual(verify(secret, test), payload, "the signed body carries the event id (as webhook-id), the payload version and the account's first number");
    assert.match(String(test.headers['webhook-id']), /^evt_[0-9a-z]+$/);
    assert.ok(!Number.isNaN(Date.parse(test.event.timestamp)));
    // The detector's first pass records what exists; only later changes are news.
    await eventually(async () => (await gw.stores.webhooks.readSnapshot('acme'))[BASELINE_FIELD], 'first detector pass');

    const body = { product_id: '1', billing_cycle: 'monthly', config_options: { '1': '11' }, hostname: 'hooks1.example.com' };
    const placed = await call(base, 'POST', '/v1/orders', { key, body, headers: { 'idempotency-key': randomUUID() } });
    assert.equal(placed.status, 201, placed.text);
    const order = placed.json();
    const created = await receiver.waitFor((r) => r.event.type === 'order.created' && r.event.data.id === order.id, 'order.created');
    assert.deepEqual(created.event.data, order, 'data is the order as the API returns it');

    const orderActive = await receiver.waitFor(
      (r) => r.event.type === 'order.status_changed' && r.event.data.id === order.id,
      'order.status_changed',
    );
    assert.equal(orderActive.event.data.status, 'active');
    assert.deepEqual(orderActive.event.data, (await call(base, 'GET', `/v1/orders/${order.id}`, { key })).json());
    const serviceId = order.service_ids[0];
    const serviceActive = await receiver.waitFor(
      (r) => r.event.type === 'service.status_changed' && r.event.data.id === serviceId,
      'service.status_changed',
    );
    assert.equal(serviceActive.event.data.status, 'active');
    assert.deepEqual(serviceActive.event.data, (await call(base, 'GET', `/v1/services/${serviceId}`, { key })).json());

    for (const delivery of receiver.received) {
      verify(secret, delivery);
      const type = delivery.event.type as EventType;
      assert.ok(EVENT_TYPES.includes(type), type);
      assert.deepEqual(eventPayloadSchema(type).parse(delivery.event), delivery.event, `${type} matches its documented schema`);
      const { id, api_version } = JSON.parse(delivery.body) as { id: unknown; api_version: unknown };
      assert.deepEqual([id, api_version], [delivery.headers['webhook-id'], 'v1'], `${type}: id is the webhook-id`);
    }
    const types = receiver.received.map((r) => r.event.type);
    assert.equal(types.filter((type) => type === 'order.created').length, 1, 'the order was announced once');
    assert.equal(types.filter((type) => type === 'order.status_changed').length, 1, 'its change was announced once');
  });

  t.test('a delivery carries the W3C trace of the request that caused it; an event the detector found, a new trace', async () => {
    const count = receiver.received.length;
    const isNew = (r: (typeof receiver.received)[number]) => receiver.received.indexOf(r) >= count;
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    await setUrl(receiver.url, {}, { traceparent: `00-${callerTrace}-00f067aa0ba902b7-01`, tracestate: 'reseller=7' });
    const test = await receiver.waitFor((r) => isNew(r) && r.event.type === 'webhook.test', 'webhook.test');
    const sent = parseTraceparent(test.headers.traceparent);
    assert.ok(sent, `a valid traceparent: ${test.headers.traceparent}`);
    assert.equal(sent.traceId, callerTrace, "the PUT's trace");
    assert.notEqual(sent.parentId, '00f067aa0ba902b7', "the gateway's span is the parent, not the caller's");
    assert.equal(sent.flags, '01', 'the flags passed on');
    assert.equal(test.headers.tracestate, 'reseller=7');

    const orderTrace = '0af7651916cd43dd8448eb211c80319c';
    const body = { product_id: '1', billing_cycle: 'monthly', config_options: { '1': '11' }, hostname: 'traced.example.com' };
    const headers = { 'idempotency-key': randomUUID(), traceparent: `00-${orderTrace}-b7ad6b7169203331-01` };
    const placed = await call(base, 'POST', '/v1/orders', { key, body, headers });
    assert.equal(placed.status, 201, placed.text);
    const order = placed.json();
    const created = await receiver.waitFor((r) => r.event.type === 'order.created' && r.event.data.id === order.id, 'order.created');
    const addOrder = simulator.calls.find((c) => c.action === 'addorder' && c.traceparent?.includes(orderTrace));
    assert.ok(addOrder, 'the AddOrder call carried the order request\'s trace');
    assert.equal(created.headers.traceparent, addOrder.traceparent, 'the same trace and span as the upstream calls of the request');

    const changed = await receiver.waitFor((r) => r.event.type === 'order.status_changed' && r.event.data.id === order.id, 'order.status_changed');
    const fresh = parseTraceparent(changed.headers.traceparent);
    assert.ok(fresh, `a valid traceparent: ${changed.headers.traceparent}`);
    assert.ok(![callerTrace, orderTrace].includes(fresh.traceId), 'found by the detector: a trace of its own');
    assert.equal(changed.headers.tracestate, undefined);
  });

  t.test('a service action delivers service.action.succeeded with the action result', async () => {
    const acted = await call(base, 'POST', '/v1/services/1/actions', { key, body: { action: 'reboot' }, headers: { 'idempotency-key': randomUUID() } });
    assert.equal(acted.status, 200, acted.text);
    const event = await receiver.waitFor((r) => r.event.type === 'service.action.succeeded', 'service.action.succeeded');
    assert.deepEqual(event.event.data, acted.json());
  });

  t.test('an action the backend refuses delivers service.action.failed with the problem it was answered with', async () => {
    const refused = await call(base, 'POST', '/v1/services/1/actions', { key, body: { action: 'cancel_revoke' }, headers: { 'idempotency-key': randomUUID() } });
    assert.ok(refused.status >= 400, refused.text);
    const event = await receiver.waitFor((r) => r.event.type === 'service.action.failed', 'service.action.failed');
    const problem = refused.json();
    assert.deepEqual(event.event.data, { service_id: '1', action: 'cancel_revoke', status: problem.status, reason: problem.reason, detail: problem.detail });
  });

  t.test('a receiver that is down for a while gets the event on a retry, with the same webhook-id', async () => {
    let refusals = 3;
    // Only webhook.test is refused: the detector may deliver other events meanwhile.
    receiver.answer = (r) => (r.event.type === 'webhook.test' && refusals-- > 0 ? { status: 503 } : { status: 200 });
    const start = receiver.received.length;
    await setUrl(receiver.url);
    const attempts = await eventually(async () => {
      const tests = receiver.received.slice(start).filter((r) => r.event.type === 'webhook.test');
      return tests.length >= 4 ? tests : undefined;
    }, 'the fourth attempt');
    assert.equal(new Set(attempts.map((r) => r.headers['webhook-id'])).size, 1, 'one event, one webhook-id across retries');
    assert.equal(new Set(attempts.map((r) => r.body)).size, 1, 'the same body each time');
    assert.equal(new Set(attempts.map((r) => r.headers.traceparent)).size, 1, 'the same traceparent each time');
    const state = await eventually(async () => {
      const current = await webhook();
      return current.last_delivery?.http_status === 200 ? current : undefined;
    }, 'last_delivery recorded');
    assert.equal(state.failing_since, null, 'a success ends the failing run');
    assert.equal(state.status, 'enabled');
    receiver.answer = () => ({ status: 200 });
  });

  t.test('410 disables the endpoint: nothing more is sent until the URL is set again', async () => {
    receiver.answer = () => ({ status: 410 });
    await setUrl(receiver.url);
    const disabled = await eventually(async () => ((await webhook()).status === 'disabled' ? await webhook() : undefined), 'disabled');
    assert.equal(disabled.last_delivery.http_status, 410);
    assert.equal(disabled.disabled_reason, 'gone', 'the reseller can see why');
    const count = receiver.received.length;
    const acted = await call(base, 'POST', '/v1/services/1/actions', { key, body: { action: 'reboot' }, headers: { 'idempotency-key': randomUUID() } });
    assert.equal(acted.status, 200);
    receiver.answer = () => ({ status: 200 });
    await setUrl(receiver.url);
    await receiver.waitFor((r, index = receiver.received.indexOf(r)) => index >= count && r.event.type === 'webhook.test', 'test after re-enable');
    assert.ok(
      receiver.received.slice(count).every((r) => r.event.type !== 'service.action.succeeded'),
      'the action on the disabled endpoint was not queued',
    );
    assert.deepEqual([(await webhook()).status, (await webhook()).disabled_reason], ['enabled', null]);
  });

  t.test('after rotate_secret, deliveries carry both signatures: old and new secret verify', async () => {
    const before = await setUrl(receiver.url, { rotate_secret: true });
    const rotated = await setUrl(receiver.url, { rotate_secret: true });
    assert.ok(before.secret && rotated.secret && before.secret !== rotated.secret);
    const count = receiver.received.length;
    await call(base, 'POST', '/v1/services/1/actions', { key, body: { action: 'reboot' }, headers: { 'idempotency-key': randomUUID() } });
    const event = await receiver.waitFor(
      (r) => receiver.received.indexOf(r) >= count && r.event.type === 'service.action.succeeded',
      'event after rotation',
    );
    assert.equal(String(event.headers['webhook-signature']).split(' ').length, 2);
    verify(rotated.secret, event);
    verify(before.secret, event);
  });

  t.test('a redirect is not followed: counted as a failed attempt', async () => {
    const target = await startReceiver();
    try {
      receiver.answer = () => ({ status: 302, headers: { location: target.url } });
      await setUrl(receiver.url);
      const state = await eventually(async () => {
        const current = await webhook();
        return current.last_delivery?.http_status === 302 ? current : undefined;
      }, 'redirect recorded');
      assert.ok(state.failing_since !== null);
      assert.equal(target.received.length, 0, 'the redirect target got nothing');
    } finally {
      receiver.answer = () => ({ status: 200 });
      await target.close();
    }
  });

  t.test('the secret is stored sealed and never logged', async () => {
    const { secret } = await setUrl(receiver.url, { rotate_secret: true });
    assert.ok(secret);
    const stored = await gw.stores.webhooks.get('acme');
    assert.ok(stored && !stored.secret.includes(secret.slice(6)) && stored.secret.startsWith('v1.'));
    const secretBody = secret.slice('whsec_'.length);
    assert.ok(gw.logs.every((line) => !line.includes(secretBody)), 'no log line carries the secret');
  });
});
