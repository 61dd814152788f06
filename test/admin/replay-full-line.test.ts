/**
 * An operator's replay of a dropped event into its account's full line
 * (webhooks.maxWaitingPerAccount) is refused, 409 `webhook_state_conflict`, and nothing is queued
 * (src/admin/webhook-service.ts). Without the refusal the replay answered as if it had queued the
 * event: the operator believed it sent, and the receiver never got it.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { newEventId } from '../../src/webhooks/signing.js';
import { bearer } from '../helpers/gateway.js';
import { buildAdminGateway } from './helpers.js';

t.test('replaying into a full line: 409 webhook_state_conflict, nothing queued', async (t) => {
  const stores = createMemoryStores({ webhookAdmission: { perAccount: 1, maxWaiting: 1 } });
  const gw = await buildAdminGateway({ stores, runWebhooks: false });
  t.teardown(() => gw.close());
  const set = await gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers: bearer(gw.keys['acme:all']), payload: { url: 'https://hooks.example.com/in' } });
  assert.equal(set.statusCode, 200, set.body);
  // A dropped event in the log (as a full line leaves one), and the account's line full: one up for
  // delivery, one waiting.
  const [sent] = (await stores.webhooks.listDeliveries('acme', 0, 1)).entries;
  const droppedId = newEventId();
  await stores.webhooks.logDelivery('acme', { ...sent!, eventId: droppedId, state: 'dropped' }, 100);
  const filled = [];
  for (const id of [newEventId(), newEventId(), newEventId()]) filled.push((await stores.webhookOutbox.enqueue({ eventId: id, accountId: 'acme', body: sent!.body, trace: {} })).outcome);
  assert.equal(filled.at(-1), 'full', JSON.stringify(filled));
  const depth = (await stores.webhookOutbox.backlog()).depth;

  const refused = await gw.admin('POST', `/admin/v1/accounts/acme/webhook/deliveries/${droppedId}/replay`);
  assert.equal(refused.statusCode, 409, refused.body);
  assert.equal(refused.json().reason, 'webhook_state_conflict');
  assert.equal((await stores.webhookOutbox.backlog()).depth, depth, 'nothing queued');
});
