/**
 * An account mapped to another backend customer (PATCH /admin/v1/accounts/{id} `upstream_id`):
 * the detector's snapshot holds the old customer's resources, so the new customer's existing
 * orders, services and invoices are history, not news: the first pass after the change records
 * them without reporting, as the first pass for a new endpoint does; later changes are reported.
 * Likewise for an account enabled again, even when no pass saw it disabled.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { AdminService } from '../../src/admin/service.js';
import { BackendError, type Customer } from '../../src/backend/backend.js';
import type { KeyService } from '../../src/keys/key-service.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import type { AccountRecord, KeyStore } from '../../src/stores/types.js';
import type { WebhookStore } from '../../src/stores/webhook-types.js';
import type { Invoice, Order, PageRequest, Service } from '../../src/v1/schemas.js';
import { BASELINE_FIELD } from '../../src/webhooks/emitter.js';
import { ACCOUNT, detectorOver } from '../helpers/detector-harness.js';
import { startRedisServer } from '../helpers/redis.js';
import { unique, webhookRecord } from '../stores/conformance.js';

interface CustomerData {
  services: Service[];
  invoices: Invoice[];
  orders: Map<string, Order>;
}

/** Each customer's own services, invoices and orders, as a backend that filters by owner reads them. */
class FakeBackend {
  readonly customers = new Map<string, CustomerData>();

  of(upstreamId: string): CustomerData {
    let data = this.customers.get(upstreamId);
    if (!data) this.customers.set(upstreamId, (data = { services: [], invoices: [], orders: new Map() }));
    return data;
  }

  async listServices(customer: Customer, page: PageRequest) {
    const { services } = this.of(customer.upstreamId);
    return { items: services.slice((page.page - 1) * page.perPage, page.page * page.perPage), total: services.length };
  }

  async listInvoices(customer: Customer, page: PageRequest) {
    const { invoices } = this.of(customer.upstreamId);
    return { items: invoices.slice((page.page - 1) * page.perPage, page.page * page.perPage), total: invoices.length };
  }

  async getOrder(customer: Customer, id: string) {
    const found = this.of(customer.upstreamId).orders.get(id);
    if (!found) throw new BackendError('not_found', 'no such order');
    return found;
  }
}

const service = (id: string, status: Service['status']) => ({ id, status, order_id: id }) as unknown as Service;
const order = (id: string, status: Order['status']) => ({ id, status }) as unknown as Order;
const invoice = (id: string, status: Invoice['status']) => ({ id, status }) as unknown as Invoice;

const redis = await startRedisServer();
t.teardown(() => redis.stop());

/** Runs the body over the memory store and over the Redis one (the mark's tag lives in each). */
function bothStores(title: string, body: (store: WebhookStore) => Promise<void>): void {
  t.test(`${title} (memory)`, () => body(new MemoryWebhookStore()));
  t.test(`${title} (redis)`, async (t) => {
    const stores = await createRedisStores({ url: redis.url, keyPrefix: `${unique('remap')}:` });
    t.teardown(() => stores.close());
    await body(stores.webhooks);
  });
}

bothStores('an account mapped to another customer: that customer\'s history is not reported as news', async (store) => {
  const backend = new FakeBackend();
  const { detector, account, queued: inOrder } = await detectorOver(store, backend);
  const queued = async () => (await inOrder()).sort();

  const first = backend.of('1');
  first.services.push(service('10', 'active'));
  first.orders.set('10', order('10', 'active'));
  first.invoices.push(invoice('100', 'paid'));
  const second = backend.of('2');
  second.services.push(service('20', 'active'), service('21', 'suspended'));
  second.orders.set('20', order('20', 'active'));
  second.orders.set('21', order('21', 'pending'));
  second.invoices.push(invoice('200', 'paid'), invoice('201', 'unpaid'));

  await detector.tick();
  assert.deepEqual(await queued(), [], 'the first look is a baseline');

  account.upstreamId = '2';
  await detector.tick();
  assert.deepEqual(await queued(), [], "the new customer's existing records are not news");

  second.services[0] = service('20', 'suspended');
  second.orders.set('21', order('21', 'active'));
  second.invoices[1] = invoice('201', 'paid');
  second.invoices.push(invoice('202', 'unpaid'));
  await detector.tick();
  assert.deepEqual(await queued(), ['invoice.created 202', 'invoice.paid 201', 'order.status_changed 21', 'service.status_changed 20'], 'its later changes are');

  account.upstreamId = '1';
  first.services[0] = service('10', 'suspended');
  await detector.tick();
  assert.deepEqual(await queued(), [], 'mapped back: what changed meanwhile is not reported either');
  first.services[0] = service('10', 'active');
  await detector.tick();
  assert.deepEqual(await queued(), ['service.status_changed 10']);
});

bothStores('mapped back to a customer, with an endpoint that reports from a time: what changed meanwhile is not reported', async (store) => {
  // States recorded since the endpoint began to report are news to a first pass, but not after a
  // remap: they may be the other customer's, or older than the time this customer was mapped back.
  const since = new Date(Date.now() - 60_000).toISOString();
  const backend = new FakeBackend();
  const { detector, account, queued } = await detectorOver(store, backend);
  await store.set(ACCOUNT, { ...webhookRecord('https://hooks.example.com/in', 'sealed', since), reportFrom: since }, 'sealed');
  const first = backend.of('1');
  first.services.push(service('10', 'active'));
  await detector.tick();
  assert.deepEqual(await queued(), [], 'the first look is a baseline');

  account.upstreamId = '2';
  await detector.tick();
  account.upstreamId = '1';
  first.services[0] = service('10', 'suspended');
  await detector.tick();
  assert.deepEqual(await queued(), [], 'mapped back: what changed meanwhile is not reported, whatever the endpoint reports from');
});

bothStores('a mark written before marks named their customer is kept as this customer\'s', async (store) => {
  await store.recordSnapshot(ACCOUNT, BASELINE_FIELD, null, new Date().toISOString());
  await store.recordSnapshot(ACCOUNT, 'service:10', null, 'active', 'tag');
  const backend = new FakeBackend();
  backend.of('1').services.push(service('10', 'suspended'));
  const { detector, queued } = await detectorOver(store, backend);
  await detector.tick();
  assert.deepEqual(await queued(), ['service.status_changed 10'], 'no baseline at the upgrade: the change is reported');
  assert.equal((await store.readSnapshotState(ACCOUNT, BASELINE_FIELD))?.tag, '1', 'the mark now names its customer');
});

bothStores('an account disabled and enabled again between two passes: what changed meanwhile is not reported', async (store) => {
  const backend = new FakeBackend();
  const { detector, account, queued } = await detectorOver(store, backend);
  const admin = new AdminService({ keys: { invalidate: async () => {} } as unknown as KeyService, store: { getAccount: async () => account, replaceAccount: async (after: AccountRecord) => (Object.assign(account, after), true), listKeys: async () => [] } as unknown as KeyStore });
  const data = backend.of('1');
  data.services.push(service('10', 'active'));
  await detector.tick();

  await admin.setAccountDisabled(ACCOUNT, true);
  data.services[0] = service('10', 'suspended');
  data.invoices.push(invoice('100', 'unpaid'));
  await admin.setAccountDisabled(ACCOUNT, false);
  await detector.tick();
  assert.deepEqual(await queued(), [], 'no pass saw it disabled, yet its changes while disabled are no news (W9)');

  data.services[0] = service('10', 'active');
  await detector.tick();
  assert.deepEqual(await queued(), ['service.status_changed 10'], 'later changes are');
  await detector.tick();
  assert.deepEqual(await queued(), [], 'and the new mark holds: no second baseline');
});
