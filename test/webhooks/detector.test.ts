/**
 * ChangeDetector: what one pass over an account reports, against a fake backend whose services,
 * invoices and orders the test sets. The first pass (baseline) reports nothing; later passes report
 * what changed, each change once.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import pino from 'pino';
import { BackendError, type Backend, type Customer } from '../../src/backend/backend.js';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import type { AccountRecord, KeyStore } from '../../src/stores/types.js';
import type { Invoice, Order, PageRequest, Service } from '../../src/v1/schemas.js';
import { ChangeDetector } from '../../src/webhooks/detector.js';
import { WebhookEvents } from '../../src/webhooks/emitter.js';
import { snapshotTagTime } from '../../src/webhooks/signing.js';
import { ACCOUNT, detectorOver } from '../helpers/detector-harness.js';
import { webhookRecord } from '../stores/conformance.js';

const service = (id: string, status: Service['status'], orderId: string | null = id) => ({ id, status, order_id: orderId }) as unknown as Service;
const order = (id: string, status: Order['status']) => ({ id, status }) as unknown as Order;

/** The upstream as the detector reads it: one customer's services, invoices and orders. */
class FakeBackend {
  services: Service[] = [];
  invoices: Invoice[] = [];
  orders = new Map<string, Order>();
  orderReads: string[] = [];

  async listServices(_customer: Customer, page: PageRequest) {
    return { items: this.services.slice((page.page - 1) * page.perPage, page.page * page.perPage), total: this.services.length };
  }

  async listInvoices(_customer: Customer, page: PageRequest) {
    return { items: this.invoices.slice((page.page - 1) * page.perPage, page.page * page.perPage), total: this.invoices.length };
  }

  async getOrder(_customer: Customer, id: string) {
    this.orderReads.push(id);
    const found = this.orders.get(id);
    if (!found) throw new BackendError('not_found', 'no such order');
    return found;
  }

  /** A service with its own order, as an order placed in the billing system leaves them. */
  add(id: string, serviceStatus: Service['status'], orderStatus: Order['status']): void {
    this.services.push(service(id, serviceStatus));
    this.orders.set(id, order(id, orderStatus));
  }
}

async function setUp() {
  const store = new MemoryWebhookStore();
  const backend = new FakeBackend();
  return { store, backend, ...(await detectorOver(store, backend)) };
}

t.test('change detector: orders', async (t) => {
  t.test('an account with more services than one pass reads orders for: later passes report none of them as created', async () => {
    const { backend, detector, queued } = await setUp();
    for (let id = 1; id <= 120; id += 1) backend.add(String(id), 'active', 'active');
    await detector.tick();
    assert.deepEqual(await queued(), [], 'the first pass is the baseline');
    for (let pass = 0; pass < 3; pass += 1) await detector.tick();
    assert.deepEqual(await queued(), [], 'orders that existed before the first pass are no news');
    backend.add('121', 'pending', 'pending');
    await detector.tick();
    assert.deepEqual(await queued(), ['order.created 121'], 'an order placed later is');
  });

  t.test('open orders beyond one pass\'s reads starve neither new orders nor each other', async () => {
    const { backend, detector, queued } = await setUp();
    // Orders nobody paid stay pending in WHMCS for good; 60 of them are more than one pass reads.
    for (let id = 1; id <= 60; id += 1) backend.add(String(id), 'pending', 'pending');
    await detector.tick();
    await detector.tick();
    assert.deepEqual(await queued(), []);
    backend.add('61', 'pending', 'pending');
    await detector.tick();
    assert.deepEqual(await queued(), ['order.created 61'], 'a new order is read before the open ones');
    for (const id of ['1', '30', '60']) backend.orders.set(id, order(id, 'cancelled'));
    await detector.tick();
    await detector.tick();
    assert.deepEqual((await queued()).sort(), ['order.status_changed 1', 'order.status_changed 30', 'order.status_changed 60'], 'every open order is read in turn');
  });
  t.test('an open order deleted upstream is forgotten: no longer read, no longer kept', async () => {
    const { store, backend, detector } = await setUp();
    for (let id = 1; id <= 60; id += 1) backend.add(String(id), 'pending', 'pending');
    await detector.tick();
    // Admins delete stale pending orders (their services go with them).
    const deleted = ['5', '25', '55'];
    for (const id of deleted) backend.orders.delete(id);
    backend.services = backend.services.filter((candidate) => !deleted.includes(candidate.id));
    await detector.tick();
    await detector.tick();
    backend.orderReads = [];
    await detector.tick();
    await detector.tick();
    assert.deepEqual(backend.orderReads.filter((id) => deleted.includes(id)), []);
    const snapshot = await store.readSnapshot(ACCOUNT);
    assert.deepEqual(deleted.filter((id) => `order:${id}` in snapshot), []);
  });
});

t.test('change detector: lists', async (t) => {
  t.test('an account with more than a thousand services: the newest (WHMCS lists by id ascending) are seen too', async () => {
    const { backend, detector, queued } = await setUp();
    for (let id = 1; id <= 1_050; id += 1) backend.services.push(service(String(id), 'active', null));
    await detector.tick();
    backend.add('1051', 'pending', 'pending');
    await detector.tick();
    backend.services[1_050] = service('1051', 'active');
    await detector.tick();
    assert.deepEqual(await queued(), ['order.created 1051', 'service.status_changed 1051']);
  });

  t.test('a list whose pages never end (a total it never reaches) is given up, and the pass goes on', async () => {
    const { backend, detector, queued } = await setUp();
    let reads = 0;
    backend.listServices = async () => {
      reads += 1;
      return { items: Array.from({ length: 100 }, (_, index) => service(String(index + 1), 'active', null)), total: 1e9 };
    };
    await detector.tick();
    assert.equal(reads, 1_000, 'read up to the bound, not for ever');
    assert.deepEqual(await queued(), []);
  });

  t.test('a short page is the last, whatever the total says', async () => {
    const { backend, detector } = await setUp();
    let reads = 0;
    backend.listServices = async () => {
      reads += 1;
      return { items: [service('1', 'active', null)], total: 50 };
    };
    await detector.tick();
    assert.equal(reads, 1);
  });
});

t.test('change detector: the lease', async (t) => {
  t.test('a pass that outlives its lease stops at the next account: two instances never scan at once', async () => {
    let clock = Date.now();
    const store = new MemoryWebhookStore(() => clock);
    const log = pino({ level: 'silent' });
    const events = new WebhookEvents(store, new MemoryWebhookOutbox(), log);
    const accounts: AccountRecord[] = ['a1', 'a2'].map((id) => ({ id, name: id, upstreamId: id, createdAt: new Date().toISOString() }));
    for (const { id } of accounts) await store.set(id, webhookRecord(`https://hooks.example.com/${id}`, 'sealed', new Date().toISOString()), null);
    const keys = { listAccounts: async () => accounts } as unknown as KeyStore;
    const scans: string[] = [];
    let release: () => void = () => undefined;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const backend = new FakeBackend();
    backend.listServices = async (customer: Customer, page: PageRequest) => {
      scans.push(customer.accountId);
      // The first instance's first read hangs past its lease (a slow upstream).
      if (scans.length === 1) await slow;
      return FakeBackend.prototype.listServices.call(backend, customer, page);
    };
    const detector = () => new ChangeDetector({ backend: backend as unknown as Backend, keys, store, events, pollIntervalMs: 60_000, log });
    const first = detector();
    const pass = first.tick();
    while (scans.length === 0) await new Promise((resolve) => setImmediate(resolve));
    clock += 3 * 60_000;
    await detector().tick();
    release();
    await pass;
    assert.deepEqual(scans, ['a1', 'a1', 'a2'], 'the second instance scanned both; the first, its lease gone, no other');
  });

  t.test('an instance that stops gives the lease up: another scans at its next tick, not two intervals later', async () => {
    const { store, backend, events } = await setUp();
    const log = pino({ level: 'silent' });
    const account: AccountRecord = { id: ACCOUNT, name: 'Acme', upstreamId: '1', createdAt: new Date().toISOString() };
    const keys = { listAccounts: async () => [account] } as unknown as KeyStore;
    const scans: string[] = [];
    backend.listServices = async (customer: Customer, page: PageRequest) => {
      scans.push(customer.accountId);
      return FakeBackend.prototype.listServices.call(backend, customer, page);
    };
    const detector = () => new ChangeDetector({ backend: backend as unknown as Backend, keys, store, events, pollIntervalMs: 60_000, log });
    const [first, second] = [detector(), detector()];
    await first.tick();
    await second.tick();
    assert.deepEqual(scans, [ACCOUNT], 'the lease holder alone scans');
    await first.stop();
    await second.tick();
    assert.deepEqual(scans, [ACCOUNT, ACCOUNT], 'the other instance took over at once');
  });
});

t.test('change detector: an endpoint disabled, then enabled again', async (t) => {
  t.test('hears of changes from then on, not of those made while it was disabled (W9)', async () => {
    const { store, events, backend, detector, queued } = await setUp();
    backend.add('1', 'active', 'active');
    backend.add('2', 'pending', 'pending');
    backend.invoices = [{ id: '7', status: 'unpaid' } as unknown as Invoice];
    await detector.tick();
    await store.disable(ACCOUNT, 'https://hooks.example.com/in', 'gone');
    backend.services[0] = service('1', 'suspended');
    backend.services[1] = service('2', 'active');
    backend.orders.set('2', order('2', 'active'));
    backend.invoices = [{ id: '7', status: 'paid' } as unknown as Invoice];
    backend.add('3', 'pending', 'pending');
    await detector.tick();
    // What PUT /v1/webhooks and the admin API's enable do for a disabled endpoint.
    await events.rebaseline(ACCOUNT);
    await store.enable(ACCOUNT, new Date().toISOString());
    await detector.tick();
    assert.deepEqual(await queued(), [], 'the disabled period\'s changes are not sent once it is back');
    backend.services[0] = service('1', 'active');
    backend.orders.set('3', order('3', 'cancelled'));
    await detector.tick();
    assert.deepEqual((await queued()).sort(), ['order.status_changed 3', 'service.status_changed 1'], 'later changes are');
  });
});

t.test('change detector: an account disabled, then enabled again', async (t) => {
  t.test('is not read while disabled, and hears of changes from its enabling on, not of those made meanwhile', async () => {
    const { backend, detector, queued, account } = await setUp();
    backend.add('1', 'active', 'active');
    backend.invoices = [{ id: '7', status: 'unpaid' } as unknown as Invoice];
    await detector.tick();
    let listed = 0;
    const listServices = backend.listServices.bind(backend);
    backend.listServices = async (customer, page) => {
      listed += 1;
      return listServices(customer, page);
    };
    // What POST /admin/v1/accounts/{id}/disable does to the record.
    account.disabledAt = new Date().toISOString();
    backend.services[0] = service('1', 'suspended');
    backend.invoices = [{ id: '7', status: 'paid' } as unknown as Invoice];
    backend.add('2', 'pending', 'pending');
    await detector.tick();
    assert.equal(listed, 0, 'a disabled account\'s services are not read');
    assert.deepEqual(await queued(), []);
    account.disabledAt = null;
    await detector.tick();
    assert.equal(listed, 1);
    assert.deepEqual(await queued(), [], 'what changed while it was disabled is not sent once it is back');
    backend.services[0] = service('1', 'active');
    await detector.tick();
    assert.deepEqual(await queued(), ['service.status_changed 1'], 'later changes are');
  });
});

t.test('change detector: a write lands while a pass reads', async (t) => {
  t.test('the state the write recorded is not taken back by the older read (no flap of events)', async () => {
    const { events, backend, detector, queued, store } = await setUp();
    backend.add('1', 'active', 'active');
    await detector.tick();
    const listServices = backend.listServices.bind(backend);
    backend.listServices = async (customer, page) => {
      const read = await listServices(customer, page);
      // POST /v1/services/1/actions (suspend) answers and records its state after this page was read
      // (a millisecond later at least: times are compared in ms).
      await sleep(2);
      backend.services[0] = service('1', 'suspended');
      await events.observe(ACCOUNT, { kind: 'service', resource: service('1', 'suspended') });
      return read;
    };
    await detector.tick();
    assert.deepEqual(await queued(), ['service.status_changed 1'], 'the write\'s event, and no "active" from the older read');
    assert.equal((await store.readSnapshotState(ACCOUNT, 'service:1'))?.state, 'suspended');
    backend.listServices = listServices;
    await detector.tick();
    assert.deepEqual(await queued(), [], 'nothing to report back and forth');
    backend.services[0] = service('1', 'active');
    await detector.tick();
    assert.deepEqual(await queued(), ['service.status_changed 1'], 'a later change is reported');
  });

  t.test('an entry recorded by a version whose tags hold no time is compared as before', async () => {
    const { backend, detector, queued, store } = await setUp();
    backend.add('1', 'active', 'active');
    await detector.tick();
    const { tag } = (await store.readSnapshotState(ACCOUNT, 'service:1')) ?? { tag: '' };
    assert.equal(snapshotTagTime(tag) !== undefined && Math.abs((snapshotTagTime(tag) as number) - Date.now()) < 60_000, true, `the tag ${tag} holds when it was recorded`);
    await store.recordSnapshot(ACCOUNT, 'service:1', 'active', 'suspended', 'R4nd0mTagWithoutTime');
    assert.equal(snapshotTagTime('R4nd0mTagWithoutTime'), undefined);
    await detector.tick();
    assert.deepEqual(await queued(), ['service.status_changed 1']);
  });
});
