/**
 * Replaying an event of a disabled account. The worker drops every event of a disabled
 * account unsent (README, Admin API: "while disabled, its webhook events are dropped unsent"), so a
 * replay answered 202 "Queued: the delivery, pending" was dropped at once, never sent: the operator
 * was told the event went out again. It is refused instead, as a replay to a disabled endpoint is.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer } from '../helpers/gateway.js';
import { eventually, startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { buildAdminGateway, type AdminGateway } from './helpers.js';

const WEBHOOKS = { allowPrivateTargets: true, workerIntervalMs: 20, pollIntervalMs: 3_600_000, retryScheduleMs: [0, 50, 50] };

t.test('a replay for a disabled account is refused, not answered 202 and dropped unsent', async (t) => {
  const receiver: Receiver = await startReceiver();
  const gw: AdminGateway = await buildAdminGateway({ runWebhooks: true, config: { webhooks: WEBHOOKS } });
  t.teardown(async () => {
    await gw.close();
    await receiver.close();
  });
  receiver.answer = () => ({ status: 500 });
  const set = await gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers: bearer(gw.keys['acme:all']), payload: { url: receiver.url } });
  assert.equal(set.statusCode, 200, set.body);
  const deliveries = async () => (await gw.admin('GET', '/admin/v1/accounts/acme/webhook/deliveries')).json().data as Array<{ event_id: string; state: string }>;
  const failed = await eventually(async () => (await deliveries()).find((each) => each.state === 'failed'), 'a failed event', 5_000);

  assert.equal((await gw.admin('POST', '/admin/v1/accounts/acme/disable')).statusCode, 200);
  receiver.answer = () => ({ status: 204 });
  const before = receiver.received.length;
  const replayed = await gw.admin('POST', `/admin/v1/accounts/acme/webhook/deliveries/${failed.event_id}/replay`);
  // Give the worker the time it takes to deliver (or drop) a queued event.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const after = (await deliveries()).find((each) => each.event_id === failed.event_id);
  assert.equal(replayed.statusCode, 409, `answered ${replayed.statusCode}; the receiver got ${receiver.received.length - before} request(s), the event is ${after?.state}`);
  assert.equal(replayed.json().reason, 'account_disabled');
  assert.equal(after?.state, 'failed', 'the event stays replayable once the account is enabled');
  assert.equal(receiver.received.length, before);

  assert.equal((await gw.admin('POST', '/admin/v1/accounts/acme/enable')).statusCode, 200);
  assert.equal((await gw.admin('POST', `/admin/v1/accounts/acme/webhook/deliveries/${failed.event_id}/replay`)).statusCode, 202);
  await eventually(async () => receiver.received.length > before || undefined, 'the replay delivered', 5_000);
});
