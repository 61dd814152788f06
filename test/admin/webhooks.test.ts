/**
 * An account's webhooks as the operator sees them through the admin API, with the delivery worker
 * running against a real receiving server: the endpoint's status, the delivery log (failed after
 * its attempts, delivered, dropped by a 410), a replay that delivers the same event id, and
 * re-enabling a disabled endpoint.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { BASELINE_FIELD } from '../../src/webhooks/emitter.js';
import { bearer } from '../helpers/gateway.js';
import { eventually, startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { buildAdminGateway, type AdminGateway } from './helpers.js';

/** Three attempts, 50 ms apart: an event fails within a fraction of a second. */
const WEBHOOKS = { allowPrivateTargets: true, workerIntervalMs: 20, pollIntervalMs: 3_600_000, retryScheduleMs: [0, 50, 50] };

interface Delivery {
  event_id: string;
  type: string;
  state: string;
  attempts: number;
  last_status: number | null;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  created_at: string;
}

t.test('admin webhooks', async (t) => {
  let gw: AdminGateway;
  let receiver: Receiver;

  t.before(async () => {
    receiver = await startReceiver();
    gw = await buildAdminGateway({ runWebhooks: true, config: { webhooks: WEBHOOKS } });
  });
  t.teardown(async () => {
    await gw.close();
    await receiver.close();
  });

  const setUrl = async () => {
    const set = await gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers: bearer(gw.keys['acme:all']), payload: { url: receiver.url } });
    assert.equal(set.statusCode, 200, set.body);
  };
  const deliveries = async (query = ''): Promise<Delivery[]> => (await gw.admin('GET', `/admin/v1/accounts/acme/webhook/deliveries${query}`)).json().data;
  const entry = (eventId: string) => deliveries('?per_page=100').then((all) => all.find((each) => each.event_id === eventId));
  const settled = (eventId: string, state: string) =>
    eventually(async () => {
      const found = await entry(eventId);
      return found?.state === state ? found : undefined;
    }, `${eventId} ${state}`, 5_000);

  t.test('no endpoint yet: 404 for the endpoint, an empty log', async () => {
    const none = await gw.admin('GET', '/admin/v1/accounts/acme/webhook');
    assert.equal(none.statusCode, 404);
    assert.equal(none.json().reason, 'not_found');
    assert.deepEqual(await deliveries(), []);
    assert.equal((await gw.admin('GET', '/admin/v1/accounts/nobody/webhook/deliveries')).statusCode, 404);
  });

  let failedId: string;

  t.test('an event the receiver refuses each time is failed after its attempts, with its last status', async () => {
    receiver.answer = () => ({ status: 500 });
    await setUrl();
    const [queued] = await deliveries();
    assert.ok(queued);
    assert.equal(queued.type, 'webhook.test');
    failedId = queued.event_id;
    const failed = await settled(failedId, 'failed');
    assert.deepEqual({ attempts: failed.attempts, last_status: failed.last_status, next_attempt_at: failed.next_attempt_at }, { attempts: 3, last_status: 500, next_attempt_at: null });
    assert.ok(failed.last_attempt_at && Date.parse(failed.last_attempt_at) >= Date.parse(failed.created_at));
    const endpoint = (await gw.admin('GET', '/admin/v1/accounts/acme/webhook')).json();
    assert.equal(endpoint.status, 'enabled');
    assert.equal(endpoint.url, receiver.url);
    assert.equal(endpoint.last_delivery.http_status, 500);
    assert.ok(endpoint.failing_since);
    assert.ok(!JSON.stringify(endpoint).includes('whsec_'), 'never the secret');
  });

  t.test('replaying the failed event sends it again with the same id; once delivered it cannot be replayed', async () => {
    receiver.answer = () => ({ status: 204 });
    const before = receiver.received.length;
    const replayed = await gw.admin('POST', `/admin/v1/accounts/acme/webhook/deliveries/${failedId}/replay`);
    assert.equal(replayed.statusCode, 202, replayed.body);
    assert.deepEqual([replayed.json().state, replayed.json().attempts], ['pending', 0]);
    const delivered = await settled(failedId, 'delivered');
    assert.deepEqual([delivered.attempts, delivered.last_status], [1, 204]);
    const again = receiver.received.slice(before);
    assert.deepEqual(again.map((request) => request.headers['webhook-id']), [failedId]);
    assert.equal(again[0]?.event.type, 'webhook.test');

    const refused = await gw.admin('POST', `/admin/v1/accounts/acme/webhook/deliveries/${failedId}/replay`);
    assert.equal(refused.statusCode, 409);
    assert.equal(refused.json().reason, 'webhook_state_conflict');
    assert.equal((await gw.admin('POST', '/admin/v1/accounts/acme/webhook/deliveries/evt_0000000000/replay')).statusCode, 404);
  });

  t.test('a 410 disables the endpoint and drops the event; re-enabled, the dropped event can be replayed', async () => {
    receiver.answer = () => ({ status: 410 });
    await setUrl();
    const [latest] = await deliveries('?per_page=1');
    assert.ok(latest && latest.event_id !== failedId);
    const dropped = await settled(latest.event_id, 'dropped');
    assert.equal(dropped.last_status, 410);
    assert.equal((await gw.admin('GET', '/admin/v1/accounts/acme/webhook')).json().status, 'disabled');
    const whileDisabled = await gw.admin('POST', `/admin/v1/accounts/acme/webhook/deliveries/${latest.event_id}/replay`);
    assert.equal(whileDisabled.statusCode, 409);
    assert.match(whileDisabled.json().detail, /disabled; enable it first/);

    receiver.answer = () => ({ status: 200 });
    await gw.stores.webhooks.recordSnapshot('acme', BASELINE_FIELD, null, new Date().toISOString());
    const enabled = await gw.admin('POST', '/admin/v1/accounts/acme/webhook/enable');
    assert.equal(enabled.statusCode, 200);
    assert.equal(await gw.stores.webhooks.readSnapshotState('acme', BASELINE_FIELD), null, 'changes made while it was disabled are no news (W9)');
    assert.deepEqual([enabled.json().status, enabled.json().failing_since, enabled.json().url], ['enabled', null, receiver.url]);
    assert.equal((await gw.admin('POST', `/admin/v1/accounts/acme/webhook/deliveries/${latest.event_id}/replay`)).statusCode, 202);
    await settled(latest.event_id, 'delivered');
  });

  t.test('the log pages newest first; the admin audit names the events replayed', async () => {
    const all = await deliveries('?per_page=100');
    assert.equal(all.length, 2);
    const page = await gw.admin('GET', '/admin/v1/accounts/acme/webhook/deliveries?per_page=1&page=2');
    assert.deepEqual(page.json().data.map((each: Delivery) => each.event_id), [all[1]?.event_id]);
    assert.deepEqual(page.json().meta, { page: 2, per_page: 1, total: 2, last_page: 2 });
    assert.ok(Date.parse(all[0]!.created_at) >= Date.parse(all[1]!.created_at));
    const replays = gw.adminAudit.records.filter((record) => record.operation === 'replayWebhookDelivery');
    assert.deepEqual(
      replays.map((record) => [record.event_id, record.account_id, record.status]),
      [[failedId, 'acme', 202], [failedId, 'acme', 409], ['evt_0000000000', 'acme', 404], [all[0]?.event_id, 'acme', 409], [all[0]?.event_id, 'acme', 202]],
    );
  });
});
