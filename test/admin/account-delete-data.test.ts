/**
 * What stays behind when an operator deletes an account (a reseller offboarded: contract ended, a
 * data-protection request). Its endpoint and secrets, change snapshot, delivery log, delivery slots
 * and event counter are gone at once; what is kept under its id for a while (idempotency records,
 * rate-limit windows, event numbers by event id) expires on its own bound; the retired id alone is
 * kept for good. A queued event reaching the worker after the deletion does not write the log again.
 */
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import pino from 'pino';
import t from 'tap';
import { WebhookConfigSchema } from '../../src/config.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import type { Stores } from '../../src/stores/types.js';
import type { DeliveryLogEntry } from '../../src/stores/webhook-types.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { DeliveryWorker } from '../../src/webhooks/worker.js';
import { buildAdminGateway, type AdminGateway } from '../admin/helpers.js';
import { bearer } from '../helpers/gateway.js';
import { startRedisServer } from '../helpers/redis.js';
import { eventually } from '../helpers/webhook-receiver.js';

/** The outbox's keys holding events not yet done: the worker drops a deleted account's as each comes due. */
const WAITING_EVENTS = ['{webhooks}:outbox', '{webhooks}:retry', '{webhooks}:parked', '{webhooks}:pending', '{webhooks}:in-stream', '{webhooks}:parked-accounts'];

const CREATED = '2026-03-01T00:00:00.000Z';

function logEntry(eventId: string): DeliveryLogEntry {
  return { eventId, type: 'service.updated', state: 'failed', attempts: 8, lastStatus: 500, lastAttemptAt: CREATED, nextAttemptAt: null, createdAt: CREATED, body: '{"data":{"customer":"private"}}' };
}

/**
 * Account `id` with a key, a webhook endpoint, a delivery in its log, a numbered event delivered,
 * a delivery slot held and a v1 request served (rate-limit windows, a cached lookup); its key.
 */
async function reseller(gw: AdminGateway, id: string, upstreamId: string): Promise<string> {
  assert.equal((await gw.admin('POST', '/admin/v1/accounts', { body: { id, name: id, upstream_id: upstreamId } })).statusCode, 201);
  const issued = await gw.admin('POST', `/admin/v1/accounts/${id}/keys`, { body: { name: 'k', scopes: ['read:services', 'write:webhooks'] }, headers: { 'idempotency-key': `${id}-key` } });
  assert.equal(issued.statusCode, 201, issued.body);
  const key = issued.json().key as string;
  const hooked = await gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers: { ...bearer(key), 'content-type': 'application/json' }, payload: JSON.stringify({ url: `https://hooks.example.com/${id}` }) });
  assert.ok(hooked.statusCode < 300, hooked.body);
  assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/services', headers: bearer(key) })).statusCode, 200);
  const { webhooks, webhookOutbox } = gw.stores;
  await webhooks.logDelivery(id, logEntry(`evt_${id}_1`), 100);
  await webhooks.recordSnapshot(id, 'service:1', null, 'active');
  await webhooks.takeDeliverySlot(id, `holder-${id}`, 2, 60_000);
  await webhookOutbox.enqueue({ eventId: `evt_${id}_2`, accountId: id, body: '{}', trace: {}, numbered: true });
  for (const claimed of await webhookOutbox.claim('test', 10, 60_000)) await webhookOutbox.complete(claimed, 'delivered');
  return key;
}

/** The next number a numbered event of the account takes. */
async function nextNumber(stores: Stores, accountId: string, eventId: string): Promise<number | undefined> {
  const result = await stores.webhookOutbox.enqueue({ eventId, accountId, body: '{}', trace: {}, numbered: true });
  return 'body' in result ? (JSON.parse(result.body) as { sequence: number }).sequence : undefined;
}

t.test('memory stores: the deleted account leaves no delivery log, snapshot or event counter', async (t) => {
  const gw = await buildAdminGateway({ stores: createMemoryStores() });
  t.teardown(() => gw.close());
  await reseller(gw, 'leaving', '3');
  await reseller(gw, 'staying', '4');
  const stayingLog = await gw.stores.webhooks.listDeliveries('staying', 0, 10);
  assert.equal((await gw.admin('DELETE', '/admin/v1/accounts/leaving')).statusCode, 200);

  const { webhooks } = gw.stores;
  assert.deepEqual(await webhooks.listDeliveries('leaving', 0, 10), { entries: [], total: 0 }, 'its delivery log is gone');
  assert.equal(await webhooks.getDelivery('leaving', 'evt_leaving_1'), null);
  assert.deepEqual(await webhooks.readSnapshot('leaving'), {});
  assert.equal(await webhooks.get('leaving'), null);
  assert.equal(await nextNumber(gw.stores, 'leaving', 'evt_after'), 1, 'its event counter is gone');
  assert.deepEqual(await webhooks.listDeliveries('staying', 0, 10), stayingLog, 'another account keeps its log');
  assert.notEqual(await nextNumber(gw.stores, 'staying', 'evt_staying_3'), 1, 'and its counter');
});

t.test('Redis: nothing naming the deleted account is kept without an expiry but its retired id', async (t) => {
  const server = await startRedisServer();
  const gw = await buildAdminGateway({ stores: await createRedisStores({ url: server.url }) });
  const raw = new Redis(server.url);
  t.teardown(async () => {
    raw.disconnect();
    await gw.close();
    await server.stop();
  });
  await reseller(gw, 'leaving', '3');
  await reseller(gw, 'staying', '4');
  // An account that shared the customer before sharing was refused (written as an older release did).
  await gw.stores.keys.putAccount({ id: 'sharer', name: 'Sharer', upstreamId: '3', createdAt: CREATED });
  const stayingLog = await gw.stores.webhooks.listDeliveries('staying', 0, 10);
  assert.equal((await gw.admin('DELETE', '/admin/v1/accounts/leaving')).statusCode, 200);

  const kept: string[] = [];
  for (const name of await raw.keys('*')) {
    const type = await raw.type(name);
    const content =
      type === 'hash' ? JSON.stringify(await raw.hgetall(name))
      : type === 'set' ? JSON.stringify(await raw.smembers(name))
      : type === 'zset' ? JSON.stringify(await raw.zrange(name, '0', '-1'))
      : type === 'list' ? JSON.stringify(await raw.lrange(name, 0, -1))
      : type === 'stream' ? JSON.stringify(await raw.xrange(name, '-', '+'))
      : ((await raw.getBuffer(name))?.toString('latin1') ?? '');
    if (!`${name} ${content}`.includes('leaving')) continue;
    if (name.endsWith('{keys}:retired-accounts') || WAITING_EVENTS.some((waiting) => name.endsWith(waiting))) continue;
    if ((await raw.pttl(name)) > 0) continue;
    kept.push(`${name} (${type}): ${content.slice(0, 200)}`);
  }
  assert.deepEqual(kept, [], 'kept for good, naming the deleted account');
  assert.deepEqual(await raw.hkeys('rg:{keys}:retired-accounts'), ['leaving']);
  // The index's own count of accounts stays right: a wrong one makes the next account write rebuild it from every account.
  const index = await raw.hgetall('rg:{keys}:upstream-accounts');
  assert.equal(index[''], String(await raw.hlen('rg:{keys}:accounts')));
  assert.equal(index['4'], '["staying"]');
  assert.equal(index['3'], '["sharer"]', 'the customer it shared is held by the other alone');
  assert.deepEqual(await gw.stores.webhooks.listDeliveries('staying', 0, 10), stayingLog, 'another account keeps its log');
});

t.test("an event of a deleted account reaching the worker is dropped without writing the account's delivery log again", async () => {
  const store = new MemoryWebhookStore();
  const outbox = new MemoryWebhookOutbox();
  // The account and its endpoint are gone; the event was queued before the deletion.
  await outbox.enqueue({ eventId: 'evt_late', accountId: 'deleted', body: JSON.stringify({ type: 'service.updated', timestamp: CREATED, data: {} }), trace: {}, numbered: true });
  const outcomes: string[] = [];
  const worker = new DeliveryWorker({
    outbox,
    store,
    accounts: { getAccount: async () => null },
    box: new SecretBox(Buffer.alloc(32, 7)),
    config: WebhookConfigSchema.parse({ allowPrivateTargets: true, workerIntervalMs: 20 }),
    transport: { resolve: async () => ['127.0.0.1'], allowPrivateTargets: true },
    log: pino({ level: 'silent' }),
    onAttempt: (outcome) => outcomes.push(outcome),
  });
  worker.start();
  try {
    await eventually(async () => (await outbox.backlog()).depth === 0 && outcomes.length > 0, 'the event done');
  } finally {
    await worker.stop();
  }
  assert.deepEqual(outcomes, ['dropped']);
  assert.deepEqual(await store.listDeliveries('deleted', 0, 10), { entries: [], total: 0 });
  assert.equal((await outbox.claim('test', 10, 60_000)).length, 0, 'not queued again');
});
