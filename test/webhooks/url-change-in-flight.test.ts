/**
 * A delivery still in flight to the URL that was just replaced: its answer is the old endpoint's,
 * so it must not disable the new one (410) nor start its run of failures.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildTestGateway } from '../helpers/gateway.js';
import { eventually, startReceiver } from '../helpers/webhook-receiver.js';

t.test("an old URL's late 410 leaves the URL set meanwhile enabled", async (t) => {
  const gw = await buildTestGateway({ runWebhooks: true, config: { webhooks: { allowPrivateTargets: true, workerIntervalMs: 30 } } });
  const old = await startReceiver();
  const current = await startReceiver();
  t.teardown(async () => {
    await gw.close();
    await old.close();
    await current.close();
  });
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  old.answer = async () => {
    await released;
    return { status: 410 };
  };
  const headers = { authorization: `Bearer ${gw.keys['acme:all']}`, 'content-type': 'application/json' };
  const put = (url: string) => gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers, payload: { url } });

  assert.equal((await put(old.url)).statusCode, 200);
  const held = await old.waitFor((r) => r.event.type === 'webhook.test', 'the test event at the old URL');
  assert.equal((await put(current.url)).statusCode, 200);
  await current.waitFor((r) => r.event.type === 'webhook.test', 'the test event at the new URL');
  await eventually(async () => (await gw.stores.webhooks.get('acme'))?.lastDelivery?.httpStatus === 200, 'the new URL answered');

  release();
  const eventId = String(held.headers['webhook-id']);
  await eventually(async () => (await gw.stores.webhooks.getDelivery('acme', eventId))?.attempts === 1, "the old URL's answer is settled");
  const record = await gw.stores.webhooks.get('acme');
  assert.equal(record?.url, current.url);
  assert.equal(record?.status, 'enabled', 'the new URL never answered 410');
  assert.equal(record?.disabledReason, null);
  assert.equal(record?.failingSince, null, "the new URL's deliveries have not failed");
  assert.equal(record?.lastDelivery?.httpStatus, 200);
});
