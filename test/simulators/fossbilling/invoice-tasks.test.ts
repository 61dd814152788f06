/**
 * The simulator pays an invoice as FOSSBilling does: each line's task runs
 * (Invoice/ServiceInvoiceItem.php executeTask, 0.6.22 to 0.8.5). The invoice admin order/create
 * issues has a line of task `renew` (Invoice/Service.php generateForOrder), and renewing an order
 * never activated fails (Order/Service.php renewFromOrder: `failed_renew`, FOSSBilling#2693). The
 * simulator activated such an order on payment, so the sandbox showed a provisioned order that a
 * real FOSSBilling never sets up.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import type { Backend } from '../../../src/backend/backend.js';
import { createFossbillingBackend } from '../../../mappings/fossbilling/backend.js';
import { FossbillingConfigSchema } from '../../../mappings/fossbilling/config.js';
import { createFossbillingSeed, type FossbillingSimulator, startFossbillingSimulator } from '../../../simulators/fossbilling/server.js';
import { markInvoicePaid } from '../../../simulators/fossbilling/state.js';
import { CTX, CUSTOMER, keyed } from '../../mappings/fossbilling/fake-call.js';

t.test('FOSSBilling simulator: paying an invoice runs its lines\' tasks', async (t) => {
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

  t.test('an order paid from credit as order/create returns is failed_renew, unprovisioned, and shown pending', async () => {
    const placed = await backend.placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'monthly', hostname: 'renewed.example.com' }, keyed('k-renew'));
    const order = sim.state.orders.find((candidate) => String(candidate.id) === placed.id)!;
    assert.deepEqual([order.status, order.activated_at, order.hosting], ['failed_renew', null, null], 'the renew task found no service');
    assert.ok(sim.state.statusChanges.some((change) => change.order_id === order.id && /no active service/.test(change.notes)), 'the failure is in the order\'s history');
    assert.deepEqual([placed.status, placed.payment_status], ['pending', 'paid']);
    assert.equal((await backend.getService(CUSTOMER, placed.id, CTX)).status, 'pending');
  });

  t.test('paid later, the same: failed_renew', async () => {
    const invoice = sim.state.invoices.find((candidate) => candidate.id === 2)!;
    markInvoicePaid(sim.state, invoice, '2026-03-01 12:00:00');
    const order = sim.state.orders.find((candidate) => candidate.id === 4)!;
    assert.deepEqual([order.status, order.activated_at], ['failed_renew', null]);
    assert.equal((await backend.getOrder(CUSTOMER, '4', CTX)).status, 'pending');
  });

  t.test('a line of task activate (the checkout\'s) activates the order', async () => {
    const order = sim.state.orders.find((candidate) => candidate.id === 4)!;
    Object.assign(order, { status: 'pending_setup' });
    const invoice = { ...structuredClone(sim.state.invoices[1]!), id: 50, status: 'unpaid' as const, paid_at: null };
    invoice.lines = [{ ...invoice.lines[0]!, task: 'activate' as const }];
    sim.state.invoices.push(invoice);
    markInvoicePaid(sim.state, invoice, '2026-03-02 12:00:00');
    assert.deepEqual([order.status, order.activated_at, order.hosting?.username], ['active', '2026-03-02 12:00:00', 'user4']);
  });

  t.test('a renew line on an active order moves its expiry one period on', async () => {
    const invoice = { ...structuredClone(sim.state.invoices[0]!), id: 51, status: 'unpaid' as const, paid_at: null };
    sim.state.invoices.push(invoice);
    markInvoicePaid(sim.state, invoice, '2026-11-20 12:00:00');
    const order = sim.state.orders.find((candidate) => candidate.id === 1)!;
    assert.deepEqual([order.status, order.expires_at], ['active', '2027-01-01 00:00:00']);
  });
});

t.test('FOSSBilling simulator progress: staff activate a paid order its renew task failed (order/activate with force)', async () => {
  const sim = await startFossbillingSimulator({ progress: { afterMs: 100 } });
  const backend = createFossbillingBackend(FossbillingConfigSchema.parse({ url: sim.url, apiToken: sim.apiToken }));
  try {
    const placed = await backend.placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'monthly', hostname: 'staff.example.com' }, keyed('k-staff'));
    assert.equal(placed.status, 'pending');
    const deadline = Date.now() + 5_000;
    const order = sim.state.orders.find((candidate) => String(candidate.id) === placed.id)!;
    while (order.status !== 'active' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal((await backend.getService(CUSTOMER, placed.id, CTX)).status, 'active');
  } finally {
    await backend.close();
    await sim.close();
  }
});
