/**
 * An order's invoice and payment status. FOSSBilling links an order's invoice only while it is
 * unpaid (`unpaid_invoice_id`, cleared when it is paid: Invoice/ServiceInvoiceItem.php markAsPaid);
 * after that the order's own invoice is found by an `invoice/get_list` search on `order_id`
 * (Invoice/Repository/InvoiceRepository.php getSearchQueryBuilder: the invoices with a line of type
 * `order` for it, newest first), whose rows show each line's `order_id` (Invoice/Service.php
 * toApiArray). The answers below are built from that source.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { OrderSchema } from '../../../src/v1/schemas.js';
import { backendWith, CTX, CUSTOMER, FakeCall } from './fake-call.js';
import * as answers from './fixtures/answers.js';

/** The order of the fixtures (7), its invoice paid: FOSSBilling has dropped the link. */
const paidOrder = { ...answers.order, unpaid_invoice_id: null };

function invoice(id: number, status: string, orderId: number | null, clientId = 1) {
  const [line] = answers.invoice.lines;
  return {
    ...answers.invoice,
    id,
    nr: String(id),
    client_id: clientId,
    status,
    paid_at: status === 'paid' ? '2026-02-02 10:00:00' : null,
    lines: [{ ...line, order_id: orderId, type: orderId === null ? 'custom' : 'order', rel_id: orderId }],
  };
}

function fake(order: unknown, search: (params: Record<string, unknown>) => unknown): FakeCall {
  return new FakeCall().answer('client/get', answers.client).answer('order/get', order).answer('invoice/get_list', search);
}

t.test('FOSSBilling: an order\'s own invoice', async (t) => {
  t.test('a paid order: its invoice found by order, payment_status paid', async () => {
    const calls = fake(paidOrder, () => answers.page([invoice(12, 'paid', 7)]));
    const order = OrderSchema.parse(await backendWith(calls).getOrder(CUSTOMER, '7', CTX));
    assert.equal(order.invoice_id, '12');
    assert.equal(order.payment_status, 'paid');
    const search = calls.calls.find((call) => call.method === 'invoice/get_list');
    assert.equal(search?.params.order_id, '7');
    assert.equal(search?.params.client_id, '1');
  });

  t.test('an unpaid invoice still linked: shown with the status the search reads for it', async () => {
    const calls = fake(answers.order, () => answers.page([invoice(12, 'unpaid', 7)]));
    const order = await backendWith(calls).getOrder(CUSTOMER, '7', CTX);
    assert.deepEqual([order.invoice_id, order.payment_status], ['12', 'unpaid']);
  });

  // Invoice/Service.php updateInvoice sets any status and leaves the order's unpaid_invoice_id: only
  // markAsPaid (ServiceInvoiceItem) and rmInvoice clear it. Staff cancel the invoice of an abandoned
  // order that way, or set one paid by hand.
  t.test('a linked invoice cancelled or set paid through invoice/update: its own status, not unpaid', async () => {
    for (const [status, shown] of [['canceled', 'cancelled'], ['paid', 'paid']] as const) {
      const order = await backendWith(fake(answers.order, () => answers.page([invoice(12, status, 7)]))).getOrder(CUSTOMER, '7', CTX);
      assert.deepEqual([order.invoice_id, order.payment_status], ['12', shown], status);
    }
  });

  t.test('a linked invoice the search does not show (or that is another client\'s): unpaid, as the link says', async () => {
    for (const list of [[], [invoice(40, 'paid', 7)], [invoice(12, 'paid', 7, 2)]]) {
      const order = await backendWith(fake(answers.order, () => answers.page(list))).getOrder(CUSTOMER, '7', CTX);
      assert.deepEqual([order.invoice_id, order.payment_status], ['12', 'unpaid'], JSON.stringify(list.map((entry) => entry.id)));
    }
  });

  t.test('renewals come first in the answer: the newest is the order\'s latest invoice, whatever the older ones became', async () => {
    const calls = fake(paidOrder, () => answers.page([invoice(40, 'paid', 7), invoice(31, 'paid', 7), invoice(12, 'canceled', 7)]));
    const order = await backendWith(calls).getOrder(CUSTOMER, '7', CTX);
    assert.equal(order.invoice_id, '40');
    assert.equal(order.payment_status, 'paid');
  });

  t.test('many invoices: one call, page 1 only (0.6.x and 0.7.x read the page from the query string)', async () => {
    const calls = fake(paidOrder, () => answers.page(Array.from({ length: 10 }, (_, index) => invoice(500 - index, 'paid', 7)), 130, 10));
    const order = await backendWith(calls).getOrder(CUSTOMER, '7', CTX);
    assert.equal(order.invoice_id, '500');
    assert.deepEqual(calls.calls.filter((call) => call.method === 'invoice/get_list').map((call) => [call.params.page, call.params.per_page]), [[1, 10]]);
  });

  t.test('a search that ignored its filter shows nothing: invoices without a line for the order, or another client\'s, never count', async () => {
    for (const listed of [[invoice(12, 'paid', null)], [invoice(12, 'paid', 8)], [invoice(12, 'paid', 7, 2)]]) {
      const order = await backendWith(fake(paidOrder, () => answers.page(listed))).getOrder(CUSTOMER, '7', CTX);
      assert.equal(order.invoice_id, null);
      assert.equal(order.payment_status, null);
    }
  });

  t.test('no invoice at all (a free order, or none issued): none shown', async () => {
    const order = await backendWith(fake(paidOrder, () => answers.page([]))).getOrder(CUSTOMER, '7', CTX);
    assert.equal(order.invoice_id, null);
    assert.equal(order.payment_status, null);
  });

  t.test('a draft invoice is not paid', async () => {
    const draft = { ...invoice(12, 'unpaid', 7), approved: false };
    const order = await backendWith(fake(paidOrder, () => answers.page([draft]))).getOrder(CUSTOMER, '7', CTX);
    assert.equal(order.payment_status, 'unpaid');
  });
});
