/**
 * W9 / remap: a baseline pass (an endpoint enabled again, an account mapped back) reads at most
 * 50 orders; the known open orders it had no read left for must not be reported later as changed
 * for what happened while the endpoint was disabled.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { BackendError, type Customer } from '../../src/backend/backend.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import type { Invoice, Order, PageRequest, Service } from '../../src/v1/schemas.js';
import { ACCOUNT, detectorOver } from '../helpers/detector-harness.js';

const service = (id: string, status: Service['status']) => ({ id, status, order_id: id }) as unknown as Service;
const order = (id: string, status: Order['status']) => ({ id, status }) as unknown as Order;

class FakeBackend {
  services: Service[] = [];
  invoices: Invoice[] = [];
  orders = new Map<string, Order>();
  async listServices(_customer: Customer, page: PageRequest) {
    return { items: this.services.slice((page.page - 1) * page.perPage, page.page * page.perPage), total: this.services.length };
  }
  async listInvoices(_customer: Customer, page: PageRequest) {
    return { items: this.invoices.slice((page.page - 1) * page.perPage, page.page * page.perPage), total: this.invoices.length };
  }
  async getOrder(_customer: Customer, id: string) {
    const found = this.orders.get(id);
    if (!found) throw new BackendError('not_found', 'no such order');
    return found;
  }
  add(id: string, status: Service['status'], orderStatus: Order['status']): void {
    this.services.push(service(id, status));
    this.orders.set(id, order(id, orderStatus));
  }
}

t.test('an endpoint enabled again: open orders beyond the baseline pass\'s reads are not reported for the disabled period', async () => {
  const store = new MemoryWebhookStore();
  const backend = new FakeBackend();
  const { events, detector, queued } = await detectorOver(store, backend);
  // Unpaid orders stay pending for good: 60 open orders, more than one pass reads.
  for (let id = 1; id <= 60; id += 1) backend.add(String(id), 'pending', 'pending');
  await detector.tick();
  await detector.tick();
  assert.deepEqual(await queued(), []);
  await store.disable(ACCOUNT, 'https://hooks.example.com/in', 'gone');
  // While disabled, staff cancel every open order.
  for (let id = 1; id <= 60; id += 1) backend.orders.set(String(id), order(String(id), 'cancelled'));
  await detector.tick();
  await events.rebaseline(ACCOUNT);
  await store.enable(ACCOUNT, new Date().toISOString());
  for (let pass = 0; pass < 3; pass += 1) await detector.tick();
  assert.deepEqual(await queued(), [], 'the disabled period\'s changes are not sent once it is back (W9)');
});
