/**
 * A free order the gateway activates. Since 0.8.4 order/create issues an invoice whatever the price
 * (Order/Service.php createOrder: `issue-invoice` without 0.6.22–0.8.3's `price > 0`); its 0.00 total
 * is paid at approval with its tasks run (Invoice/Service.php tryPayWithCredits → markAsPaid(…, true)),
 * the `renew` line fails the order (failed_renew), and the `activate` that follows refuses a
 * failed_renew order (activateOrder: only pending_setup or failed_setup). So it was never set up.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createFossbillingBackend } from '../../../mappings/fossbilling/backend.js';
import { FossbillingConfigSchema } from '../../../mappings/fossbilling/config.js';
import { startFossbillingSimulator } from '../../../simulators/fossbilling/server.js';
import { CTX, CUSTOMER, keyed } from './fake-call.js';

t.test('a free order is placed without an invoice and is set up at once', async () => {
  const sim = await startFossbillingSimulator({});
  const backend = createFossbillingBackend(FossbillingConfigSchema.parse({ url: sim.url, apiToken: sim.apiToken, invoiceOption: 'issue-invoice' }));
  try {
    const placed = await backend.placeOrder(CUSTOMER, { product_id: '4', billing_cycle: 'free' }, keyed('k-free'));
    const sent = sim.calls.find((call) => call.method === 'order/create')?.params;
    assert.equal(sent?.invoice_option, 'no-invoice', 'nothing to bill, and its 0.00 invoice would fail the order');
    assert.equal(sim.state.orders.find((candidate) => String(candidate.id) === placed.id)?.status, 'active');
    assert.deepEqual([placed.status, placed.invoice_id], ['active', null]);
    assert.equal((await backend.getService(CUSTOMER, placed.id, CTX)).status, 'active');
  } finally {
    await backend.close();
    await sim.close();
  }
});

t.test('an order priced 0.00 with a setup fee is not free: it is invoiced, and waits for its payment', async () => {
  const sim = await startFossbillingSimulator({});
  sim.state.products.push({
    id: 9,
    type: 'custom',
    title: 'Setup only',
    description: 'A one-time setup fee',
    status: 'enabled',
    hidden: false,
    payment: { type: 'once', once_price: '0.00', once_setup_price: '5.00', periods: {} },
  });
  const backend = createFossbillingBackend(FossbillingConfigSchema.parse({ url: sim.url, apiToken: sim.apiToken, invoiceOption: 'issue-invoice' }));
  try {
    await backend.placeOrder(CUSTOMER, { product_id: '9', billing_cycle: 'onetime' }, keyed('k-setup-fee'));
    const sent = sim.calls.find((call) => call.method === 'order/create')?.params;
    assert.equal(sent?.invoice_option, 'issue-invoice', 'the setup fee is billed');
    assert.equal(sent?.activate, false, 'set up once paid, as the product says');
  } finally {
    await backend.close();
    await sim.close();
  }
});
