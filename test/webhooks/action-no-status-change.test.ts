/**
 * A service action that leaves the status as it was (reboot; WHMCS's cancel, scheduled for the
 * period's end) on a service whose state no look has recorded yet, such as one acted on right after
 * the webhook was set, before the change detector's first pass: the write cannot tell that the status
 * changed, so it must not announce `service.status_changed` (it did: "active" from "active").
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { startWhmcsSimulator, type WhmcsSimulator } from '../../simulators/whmcs/server.js';
import { buildTestGateway, type TestGateway } from '../helpers/gateway.js';
import { call } from '../helpers/http.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

/** No detector pass during the test: every service is unrecorded when it is acted on. */
const WEBHOOKS = { allowPrivateTargets: true, pollIntervalMs: 3_600_000, workerIntervalMs: 30, retryScheduleMs: [0, 100, 150] };

t.test('an action that changes no status, on a service not recorded yet, announces no status change', async (t) => {
  const simulator: WhmcsSimulator = await startWhmcsSimulator();
  const gw: TestGateway = await buildTestGateway({ simulator, runWebhooks: true, config: { webhooks: WEBHOOKS } });
  const base = await gw.app.listen({ host: '127.0.0.1', port: 0 });
  const receiver: Receiver = await startReceiver();
  t.teardown(async () => {
    await gw.close();
    await simulator.close();
    await receiver.close();
  });
  const key = gw.keys['acme:all'] as string;
  const set = await call(base, 'PUT', '/v1/webhooks', { key, body: { url: receiver.url } });
  assert.equal(set.status, 200, set.text);
  await receiver.waitFor((r) => r.event.type === 'webhook.test', 'webhook.test');

  const before = (await call(base, 'GET', '/v1/services/1', { key })).json();
  assert.equal(before.status, 'active');
  for (const action of ['reboot', 'cancel']) {
    const done = await call(base, 'POST', '/v1/services/1/actions', { key, body: { action }, headers: { 'idempotency-key': randomUUID() } });
    assert.ok(done.status === 200 || done.status === 202, done.text);
    assert.equal(done.json().service.status, 'active', `${action} leaves the status`);
    await receiver.waitFor((r) => r.event.type === 'service.action.succeeded' && r.event.data.action === action, `service.action.succeeded (${action})`);
  }
  await sleep(300);
  const changed = receiver.received.filter((r) => r.event.type === 'service.status_changed').map((r) => `${r.event.data.id}: ${r.event.data.status}`);
  assert.deepEqual(changed, [], 'no service.status_changed: the status did not change');
});
