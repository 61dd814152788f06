/**
 * The operator's delivery log must say why an event fails (reference §1.4 W10: "status code,
 * latency, error class"; README: `…/webhook/deliveries` "shows why events fail"). When no answer
 * came it only had `last_status: null`: a delivery the URL policy blocked (the host now resolves to
 * an internal address), a refused connection, a timeout and an expired certificate all looked the
 * same, and support could not tell the reseller what to fix. `last_error` names it (no body, no URL).
 */
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import t from 'tap';
import { bearer } from '../helpers/gateway.js';
import { eventually } from '../helpers/webhook-receiver.js';
import { buildAdminGateway, type AdminGateway } from '../admin/helpers.js';

const SCHEDULE = { workerIntervalMs: 20, pollIntervalMs: 3_600_000, retryScheduleMs: [0, 50, 50] };

async function failedDelivery(gw: AdminGateway, url: string) {
  const set = await gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers: bearer(gw.keys['acme:all']), payload: { url } });
  assert.equal(set.statusCode, 200, set.body);
  return eventually(async () => {
    const [entry] = (await gw.admin('GET', '/admin/v1/accounts/acme/webhook/deliveries')).json().data;
    return entry?.state === 'failed' ? entry : undefined;
  }, 'the webhook.test event failed', 10_000);
}

t.test('a delivery blocked at delivery time (DNS rebinding) is named in the log', async (t) => {
  let answer = '93.184.215.14';
  const gw = await buildAdminGateway({ runWebhooks: true, resolveHost: async () => [answer], config: { webhooks: { allowPrivateTargets: false, ...SCHEDULE } } });
  t.teardown(() => gw.close());
  // Public when it is set; loopback by the time it is delivered.
  const url = 'https://hooks.example.com/in';
  const set = await gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers: bearer(gw.keys['acme:all']), payload: { url } });
  assert.equal(set.statusCode, 200, set.body);
  answer = '127.0.0.1';
  const failed = await eventually(async () => {
    const all = (await gw.admin('GET', '/admin/v1/accounts/acme/webhook/deliveries')).json().data as Array<Record<string, unknown>>;
    return all.find((entry) => entry.state === 'failed');
  }, 'the webhook.test event failed', 10_000);
  assert.equal(failed.last_status, null);
  assert.equal(failed.last_error, 'host resolves to a non-public address');
});

t.test('a refused connection is named in the log', async (t) => {
  // A port that was free a moment ago: nothing listens there now.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const gw = await buildAdminGateway({ runWebhooks: true, config: { webhooks: { allowPrivateTargets: true, ...SCHEDULE } } });
  t.teardown(() => gw.close());
  const failed = await failedDelivery(gw, `http://127.0.0.1:${port}/in`);
  assert.deepEqual([failed.attempts, failed.last_status, failed.last_error], [3, null, 'connection failed (ECONNREFUSED)']);
});
