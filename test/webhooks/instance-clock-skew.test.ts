/**
 * Instances whose clocks disagree share one webhook store. The change detector judges what it read
 * upstream against what writes recorded, and an endpoint's start against the writes after it: both
 * must hold whatever the instances' clocks say, since one clock (the store's) stamps both sides.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import pino from 'pino';
import { AdminService } from '../../src/admin/service.js';
import type { Backend, Customer } from '../../src/backend/backend.js';
import { KeyService } from '../../src/keys/key-service.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import type { AccountRecord, KeyStore } from '../../src/stores/types.js';
import type { WebhookStore } from '../../src/stores/webhook-types.js';
import type { Order, PageRequest, Service } from '../../src/v1/schemas.js';
import { ChangeDetector } from '../../src/webhooks/detector.js';
import { WebhookEvents } from '../../src/webhooks/emitter.js';
import { webhookRecord } from '../stores/conformance.js';
import { buildTestGateway } from '../helpers/gateway.js';

const ACCOUNT = 'acme';
const log = pino({ level: 'silent' });
const order = (status: Order['status']) => ({ id: '12', status }) as unknown as Order;
const service = (status: Service['status']) => ({ id: '12', status, order_id: '12' }) as unknown as Service;

/** One account's upstream: service 12 of order 12; `onOrderRead` runs while an order read is in flight. */
class Upstream {
  order = order('pending');
  svc = service('pending');
  onOrderRead: () => Promise<void> = async () => undefined;
  async listServices(_customer: Customer, _page: PageRequest) {
    return { items: [this.svc], total: 1 };
  }
  async listInvoices() {
    return { items: [], total: 0 };
  }
  async getOrder() {
    const seen = this.order;
    await this.onOrderRead();
    return seen;
  }
}

/** What was queued in `outbox` since the last call, as `type status`, oldest first. */
async function drain(outbox: MemoryWebhookOutbox): Promise<string[]> {
  const claimed = [];
  for (let batch = await outbox.claim('test', 100, 60_000); batch.length > 0; batch = await outbox.claim('test', 100, 60_000)) {
    for (const delivery of batch) await outbox.complete(delivery, 'delivered');
    claimed.push(...batch);
  }
  return claimed.map((delivery) => {
    const { type, data } = JSON.parse(delivery.body) as { type: string; data: { status: string } };
    return `${type} ${data.status}`;
  });
}

/** A detector instance over `store` with its own outbox; `reported()` lists what it and others queued there. */
function instanceOver(store: WebhookStore, upstream: Upstream, keys?: KeyStore) {
  const outbox = new MemoryWebhookOutbox();
  const events = new WebhookEvents(store, outbox, log);
  const account: AccountRecord = { id: ACCOUNT, name: 'Acme', upstreamId: '1', createdAt: new Date().toISOString() };
  const accounts = keys ?? ({ listAccounts: async () => [account] } as unknown as KeyStore);
  const detector = new ChangeDetector({ backend: upstream as unknown as Backend, keys: accounts, store, events, pollIntervalMs: 60_000, log });
  return { outbox, detector, reported: () => drain(outbox) };
}

t.test("a write on an instance whose clock runs 3 s behind the detector's is not taken back by the detector's older read", async () => {
  // The store's clock, advanced by hand; the detector's instance runs on the real clock, instance B 3 s behind it.
  let storeNow = Date.now();
  const store = new MemoryWebhookStore(() => storeNow);
  await store.set(ACCOUNT, webhookRecord('https://hooks.example.com/in', 'sealed', new Date().toISOString()), null);
  const upstream = new Upstream();
  const { outbox, detector, reported } = instanceOver(store, upstream);
  const writer = new WebhookEvents(store, outbox, log, undefined, () => Date.now() - 3_000);
  await detector.tick();
  assert.deepEqual(await reported(), [], 'the baseline reports nothing');

  // The detector reads the order, still pending; B activates it meanwhile and records it active.
  upstream.onOrderRead = async () => {
    upstream.onOrderRead = async () => undefined;
    storeNow += 1_000;
    upstream.order = order('active');
    await writer.observe(ACCOUNT, { kind: 'order', resource: order('active') });
  };
  storeNow += 60_000;
  await detector.tick();
  storeNow += 60_000;
  await detector.tick();
  assert.deepEqual(await reported(), ['order.status_changed active'], 'one change to active; no change back to pending, then forward again');
});

t.test('a write just after the endpoint was set, on an instance whose clock runs behind the one that set it, is news to the baseline', async (t) => {
  // The gateway's instance (which serves the PUT) runs on the real clock, 10 s ahead of the store and of instance B.
  let storeNow = Date.now() - 10_000;
  const stores = { ...createMemoryStores(), webhooks: new MemoryWebhookStore(() => storeNow) };
  const gw = await buildTestGateway({ stores });
  t.teardown(() => gw.close());
  const answer = await gw.app.inject({
    method: 'PUT',
    url: '/v1/webhooks',
    headers: { authorization: `Bearer ${gw.keys['acme:all']}`, 'content-type': 'application/json' },
    payload: { url: 'https://hooks.example.com/in' },
  });
  assert.equal(answer.statusCode, 200);

  // A second later B places order 12 (recorded pending), then it is paid upstream before the detector's first pass.
  storeNow += 1_000;
  const upstream = new Upstream();
  const { outbox, detector, reported } = instanceOver(stores.webhooks, upstream);
  const writer = new WebhookEvents(stores.webhooks, outbox, log, undefined, () => storeNow);
  await writer.observe(ACCOUNT, { kind: 'order', resource: order('pending') });
  upstream.order = order('active');
  upstream.svc = service('active');
  storeNow += 30_000;
  await detector.tick();
  assert.deepEqual(
    await reported(),
    ['order.created pending', 'service.status_changed active', 'order.status_changed active'],
    'the order placed after the URL was set, then its payment (its service born with it, active)',
  );
});

t.test('a write just after the account was enabled again, on an instance whose clock runs behind the one that enabled it, is news to the baseline', async () => {
  // The operator's instance runs on the real clock, 10 s ahead of the store and of instance B.
  let storeNow = Date.now() - 10_000;
  const webhooks: WebhookStore = new MemoryWebhookStore(() => storeNow);
  const stores = { ...createMemoryStores(), webhooks };
  const admin = new AdminService({ keys: new KeyService(stores.keys, 'pepper-0123456789abcdef0123456789abcdef'), store: stores.keys, clock: (id) => stores.webhooks.clock(id) });
  await admin.createAccount({ id: ACCOUNT, name: 'Acme', upstreamId: '1' });
  await stores.webhooks.set(ACCOUNT, { ...webhookRecord('https://hooks.example.com/in', 'sealed', new Date().toISOString()), reportFrom: new Date(storeNow - 3_600_000).toISOString() }, null);
  await admin.setAccountDisabled(ACCOUNT, true);
  await admin.setAccountDisabled(ACCOUNT, false);

  // A second later B places order 12 (recorded pending); it is paid upstream before the detector's first pass.
  storeNow += 1_000;
  const upstream = new Upstream();
  const { outbox, detector, reported } = instanceOver(stores.webhooks, upstream, stores.keys);
  const writer = new WebhookEvents(stores.webhooks, outbox, log, undefined, () => storeNow);
  await writer.observe(ACCOUNT, { kind: 'order', resource: order('pending') });
  upstream.order = order('active');
  upstream.svc = service('active');
  storeNow += 30_000;
  await detector.tick();
  assert.deepEqual(
    await reported(),
    ['order.created pending', 'service.status_changed active', 'order.status_changed active'],
    'the order placed after the account was enabled, then its payment',
  );
});
