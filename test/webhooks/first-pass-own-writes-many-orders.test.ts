/**
 * A first pass reads at most 50 orders, and marks the orders it had no read left for as
 * history (read quietly later). An order placed through the gateway after the endpoint was set is no
 * history: marked so, its activation was never reported. It keeps its state, and a later pass
 * reports its change; the orders that existed before the endpoint stay unreported.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { BackendError, type Customer } from '../../src/backend/backend.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import type { Invoice, Order, PageRequest, Service } from '../../src/v1/schemas.js';
import { ACCOUNT, detectorOver } from '../helpers/detector-harness.js';
import { webhookRecord } from '../stores/conformance.js';

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

t.test('an order placed after the endpoint was set, beyond the first pass\'s order reads, is reported when it becomes active', async () => {
  const store = new MemoryWebhookStore();
  const backend = new FakeBackend();
  const { events, detector, queued } = await detectorOver(store, backend);
  // 60 unpaid orders from before: more than one pass reads.
  for (let id = 1; id <= 60; id += 1) backend.add(String(id), 'pending', 'pending');
  // What PUT /v1/webhooks records for an endpoint set anew.
  const setAt = new Date();
  await store.set(ACCOUNT, { ...webhookRecord('https://hooks.example.com/in', 'sealed', setAt.toISOString()), reportFrom: setAt.toISOString() }, 'sealed');
  await sleep(2);
  // POST /v1/orders: the order's write records it (and sends order.created).
  backend.add('61', 'pending', 'pending');
  await events.observe(ACCOUNT, { kind: 'order', resource: order('61', 'pending') });
  assert.deepEqual(await queued(), ['order.created 61']);
  // Staff accept it before the detector's first pass.
  backend.services[60] = service('61', 'active');
  backend.orders.set('61', order('61', 'active'));
  for (let pass = 0; pass < 3; pass += 1) await detector.tick();
  assert.deepEqual((await queued()).sort(), ['order.status_changed 61', 'service.status_changed 61'], 'its changes, and no one else\'s');
});
