/**
 * FOSSBilling's admin `order/create` issues its invoice with one line of task `renew`
 * (Invoice/Service.php generateForOrder → ServiceInvoiceItem::generateFromOrder(..., TASK_RENEW),
 * tags 0.6.22, 0.7.2, 0.8.5), not `activate` as its own checkout does (Cart/Service.php). Paying it
 * runs ServiceInvoiceItem::executeTask → Order\Service::renewOrder → renewFromOrder, whose
 * `_callOnService(renew)` finds no service on an order never activated (Servicehosting/Service.php
 * action_renew: "Order :id has no active service") and sets `failed_renew`
 * (FOSSBilling/FOSSBilling#2693: "Order status will change to renewal failed"). `activated_at`
 * stays null: only activateOrder sets it (Order/Service.php createFromOrder). Such an order was
 * never provisioned; the gateway showed it, and its service, as `active`.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { mapOrder, mapService } from '../../../mappings/fossbilling/map.js';
import { OrderAnswer } from '../../../mappings/fossbilling/parse.js';
import { backendWith, CTX, CUSTOMER, FakeCall, rejectsWith } from './fake-call.js';
import * as answers from './fixtures/answers.js';

const order = (status: string, activatedAt: string | null) =>
  OrderAnswer.parse({
    id: 7,
    client_id: 1,
    product_id: 3,
    title: 'Shared S',
    currency: 'USD',
    period: '1M',
    quantity: 1,
    price: '9.99',
    total: '9.99',
    status,
    expires_at: null,
    activated_at: activatedAt,
    canceled_at: null,
    created_at: '2026-11-01 00:00:00',
  });

t.test('a paid order FOSSBilling never activated (failed_renew, no activated_at) is pending, not active', async () => {
  const neverActivated = order('failed_renew', null);
  assert.equal(mapService(neverActivated, 'USD').status, 'pending', 'service of an order never provisioned');
  assert.equal(mapOrder(neverActivated, 'USD', 'UTC').status, 'pending', 'order never fulfilled');
});

t.test('a renewal that failed on a service that ran stays active', async () => {
  const ran = order('failed_renew', '2026-10-01 00:00:00');
  assert.equal(mapService(ran, 'USD').status, 'active');
  assert.equal(mapOrder(ran, 'USD', 'UTC').status, 'active');
});

t.test('cancel on such an order is refused (409) before anything is sent: it has no service to cancel', async () => {
  // order/cancel would run Servicehosting action_cancel, which throws "Order :id has no active service" (502).
  const fake = new FakeCall()
    .answer('client/get', answers.client)
    .answer('order/get', { ...answers.order, status: 'failed_renew', activated_at: null })
    .answer('order/cancel', true);
  await rejectsWith(backendWith(fake).runServiceAction(CUSTOMER, '7', 'cancel', CTX), 'conflict');
  assert.deepEqual(fake.methods(), ['order/get']);
});
