/**
 * The simulator's order/create with issue-invoice against FOSSBilling's
 * Order/Service.php createOrder at 56a0871: the invoice is generated whatever the price (only a
 * negative amount is refused: Invoice/Service.php generateForOrder), then approveInvoice(…,
 * use_credits: true) → tryPayWithCredits pays it from the client's balance when the balance covers
 * it (a 0.00 invoice always), and markAsPaid clears the order's unpaid_invoice_id. Then the line's
 * task runs (Invoice/ServiceInvoiceItem.php executeTask): `renew` (generateForOrder), which fails on
 * an order never activated (Order/Service.php renewFromOrder: failed_renew, FOSSBilling#2693).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import type { Backend } from '../../../src/backend/backend.js';
import { createFossbillingBackend } from '../../../mappings/fossbilling/backend.js';
import { FossbillingConfigSchema } from '../../../mappings/fossbilling/config.js';
import { createFossbillingSeed, type FossbillingSimulator, startFossbillingSimulator } from '../../../simulators/fossbilling/server.js';
import { METHODS } from '../../../simulators/fossbilling/methods.js';
import { markInvoicePaid } from '../../../simulators/fossbilling/state.js';
import { CTX, CUSTOMER, keyed } from './fake-call.js';

t.test('FOSSBilling simulator: an order the client\'s credit covers', async (t) => {
  let sim: FossbillingSimulator;
  let backend: Backend;
  t.before(async () => {
    sim = await startFossbillingSimulator({ seed: createFossbillingSeed });
    backend = createFossbillingBackend(FossbillingConfigSchema.parse({ url: sim.url, apiToken: sim.apiToken, invoiceOption: 'issue-invoice' }));
  });
  t.teardown(async () => {
    await backend.close();
    await sim.close();
  });

  t.test('Ada (balance 12.50) orders 4.99 a month: the invoice is paid from credit, the link cleared, and both answers say so', async () => {
    const placed = await backend.placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'monthly', hostname: 'credit.example.com' }, keyed('k-credit'));
    const order = sim.state.orders.find((candidate) => String(candidate.id) === placed.id);
    const issued = sim.state.invoices.filter((candidate) => candidate.lines.some((line) => String(line.order_id) === placed.id));
    assert.equal(issued.length, 1, 'one invoice for the order');
    assert.equal(issued[0]?.status, 'paid', 'paid from the client\'s credit');
    assert.equal(order?.unpaid_invoice_id, null, 'markAsPaid cleared the link');
    assert.deepEqual([placed.invoice_id, placed.payment_status], [String(issued[0]?.id), 'paid'], 'POST /v1/orders');
    const read = await backend.getOrder(CUSTOMER, placed.id, CTX);
    assert.deepEqual([read.invoice_id, read.payment_status], [String(issued[0]?.id), 'paid'], 'GET /v1/orders/{id}');
    // The paid line's task is renew, not activate: the order was never set up, and stays so.
    assert.deepEqual([placed.status, read.status, order?.status], ['pending', 'pending', 'failed_renew']);
    assert.equal((await backend.getService(CUSTOMER, placed.id, CTX)).status, 'pending');
  });

  t.test('without the credit, the order waits for its payment, which does not set it up either', async () => {
    const ada = sim.state.clients.find((candidate) => candidate.id === 1)!;
    const balance = ada.balance;
    ada.balance = 0;
    try {
      const placed = await backend.placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'monthly', hostname: 'later.example.com' }, keyed('k-no-credit'));
      assert.deepEqual([placed.status, placed.payment_status], ['pending', 'unpaid']);
      const invoice = sim.state.invoices.find((candidate) => String(candidate.id) === placed.invoice_id)!;
      markInvoicePaid(sim.state, invoice, '2026-03-01 12:00:00');
      const read = await backend.getOrder(CUSTOMER, placed.id, CTX);
      assert.deepEqual([read.status, read.payment_status], ['pending', 'paid']);
      assert.equal((await backend.getService(CUSTOMER, placed.id, CTX)).hostname, 'later.example.com');
    } finally {
      ada.balance = balance;
    }
  });

  t.test('a free order: asked with issue-invoice, FOSSBilling issues a 0.00 invoice and pays it at once, failing the order', async () => {
    const id = METHODS['order/create']!(sim.state, { client_id: 1, product_id: 4, invoice_option: 'issue-invoice', activate: true });
    const issued = sim.state.invoices.filter((candidate) => candidate.lines.some((line) => line.order_id === id));
    assert.equal(issued.length, 1, 'generateForOrder refuses only a negative amount');
    assert.equal(issued[0]?.status, 'paid');
    // activate comes after the payment's renew task, and activateOrder refuses a failed_renew order.
    assert.equal(sim.state.orders.find((candidate) => candidate.id === id)?.status, 'failed_renew');
  });
});
