/**
 * An order's invoice and payment status in the cases FOSSBilling's own code makes (at 56a0871 and
 * its 0.6–0.8 releases): paid from credit during order/create, refunded by a credit note, renewed
 * after a cancelled invoice, and searches whose page is ignored or shifts between calls.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { backendWith, CTX, CUSTOMER, FakeCall, keyed } from './fake-call.js';
import * as answers from './fixtures/answers.js';

/** The fixtures' order 7, its link gone (FOSSBilling cleared it when the invoice was paid). */
const unlinked = { ...answers.order, unpaid_invoice_id: null };

/** An invoice as Invoice/Service.php toApiArray() lists it: rel_id a string (InvoiceItem::$relId is ?string). */
function invoice(id: number, status: string, orderId: number | null, price = '4.99', extra: Record<string, unknown> = {}) {
  const [line] = answers.invoice.lines;
  const total = Number(price);
  return {
    ...answers.invoice,
    id,
    nr: String(id),
    status,
    subtotal: total,
    tax: 0,
    total,
    paid_at: status === 'unpaid' ? null : '2026-02-02 10:00:00',
    lines: [{ ...line, price, total, taxed: 0, order_id: orderId === null ? null : String(orderId), type: orderId === null ? 'custom' : 'order', rel_id: orderId === null ? null : String(orderId) }],
    ...extra,
  };
}

function reads(order: unknown, search: (params: Record<string, unknown>) => unknown): FakeCall {
  return new FakeCall().answer('client/get', answers.client).answer('order/get', order).answer('invoice/get_list', search);
}

t.test('FOSSBilling: an order\'s invoice as FOSSBilling\'s code leaves it', async (t) => {
  // Order/Service.php createOrder (issue-invoice) → Invoice/Service.php approveInvoice(use_credits: true)
  // → tryPayWithCredits → markAsPaid → ServiceInvoiceItem::markAsPaid → Order unsetUnpaidInvoice: an order
  // paid from the client's credit (or a free order, whose 0.00 invoice is "paid" at once) has no
  // link by the time order/create returns.
  t.test('POST /v1/orders: an invoice FOSSBilling paid during order/create (credit balance, free order) is shown', async () => {
    const fake = new FakeCall()
      .answer('client/get', answers.client)
      .answer('product/get_list', answers.page([answers.hostingProduct, answers.onceProduct]))
      .answer('order/create', 7)
      .answer('order/get', unlinked)
      .answer('invoice/get_list', () => answers.page([invoice(12, 'paid', 7)]));
    const backend = backendWith(fake);
    const placed = await backend.placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'annually', hostname: 'site7.example.com' }, keyed('key-credit'));
    const read = await backend.getOrder(CUSTOMER, '7', CTX);
    assert.deepEqual([read.invoice_id, read.payment_status], ['12', 'paid'], 'GET shows it');
    assert.deepEqual([placed.invoice_id, placed.payment_status], [read.invoice_id, read.payment_status], 'the POST answer shows what GET shows');
  });

  // Invoice/Service.php refundInvoice (invoice_refund_logic credit_note / negative_invoice): the
  // original keeps status `paid`; a NEW invoice with status `refunded` copies its lines (same type,
  // same rel_id, price negated). Nothing ever sets the original to `refunded`.
  t.test('a refunded order (credit note issued) is not shown as paid', async () => {
    const creditNote = invoice(13, 'refunded', 7, '-4.99', { serie: 'CN-', nr: '1', notes: '2026-03-01 10:00:00: Refund for #12 invoice.       \n' });
    const order = await backendWith(reads(unlinked, () => answers.page([creditNote, invoice(12, 'paid', 7)]))).getOrder(CUSTOMER, '7', CTX);
    assert.equal(order.payment_status, 'refunded');
  });

  // The original invoice cancelled (invoice/update status=canceled), the order renewed:
  // Invoice/Service.php generateForOrder issues renewal 31 and links it; while unpaid the order
  // shows (31, unpaid). Paying 31 clears the link, and the order then shows (12, cancelled).
  t.test('paying the renewal does not turn the order from unpaid into cancelled', async () => {
    const linked = await backendWith(reads({ ...answers.order, unpaid_invoice_id: 31 }, () => answers.page([invoice(31, 'unpaid', 7), invoice(12, 'canceled', 7)]))).getOrder(CUSTOMER, '7', CTX);
    assert.deepEqual([linked.invoice_id, linked.payment_status], ['31', 'unpaid']);
    const paid = await backendWith(reads(unlinked, () => answers.page([invoice(31, 'paid', 7), invoice(12, 'canceled', 7)]))).getOrder(CUSTOMER, '7', CTX);
    assert.equal(paid.payment_status, 'paid', `after paying 31 the order shows ${paid.invoice_id}/${paid.payment_status}`);
  });

  // FOSSBilling 0.6.x (Box_Pagination::getAdvancedResultSet: $_GET['page']) and 0.7.x
  // (Pagination::getPaginatedResultSet: $request->query->get('page')) read the page from the query
  // string; the admin API body's `page` is ignored, `per_page` is honoured. Asked for the last page,
  // they answer page 1 again (with `page: 1` in the answer).
  t.test('an upstream that answers page 1 for the last page never passes a renewal off as the order\'s own', async () => {
    const newest = Array.from({ length: 100 }, (_, index) => invoice(500 - index, 'paid', 7));
    const calls = reads(unlinked, () => answers.page(newest, 130));
    const order = await backendWith(calls).getOrder(CUSTOMER, '7', CTX);
    assert.notEqual(order.invoice_id, '401', 'invoice 401 is the 100th newest renewal, not the order\'s own (its oldest is not on page 1)');
  });

  // At 56a0871 a renewal issued between the two calls shifts every row one place down: the oldest
  // moves to a page past the one computed from the first answer's total.
  t.test('a renewal issued between the two searches does not pass another renewal off as the order\'s own', async () => {
    const all = Array.from({ length: 200 }, (_, index) => invoice(300 - index, 'paid', 7)); // 300 … 101; 101 is the order's own
    let issued = false;
    const calls = reads(unlinked, (params) => {
      const rows = issued ? [invoice(301, 'unpaid', 7), ...all] : all;
      issued = true;
      const page = Number(params.page);
      return { ...answers.page(rows.slice((page - 1) * 100, page * 100), rows.length), page };
    });
    const order = await backendWith(calls).getOrder(CUSTOMER, '7', CTX);
    // The order's own (101), its latest (300 or 301), or none: never a row from the middle.
    assert.ok([null, '101', '300', '301'].includes(order.invoice_id), `shown: ${order.invoice_id}`);
  });
});
