import assert from 'node:assert/strict';
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Backend } from '../../../src/backend/backend.js';
import { renderInvoicePdf } from '../../../src/pdf/invoice-pdf.js';
import { AccountSchema, ActionResultSchema, InvoiceSchema, OrderSchema, ProductSchema, ServiceSchema } from '../../../src/v1/schemas.js';
import { createFossbillingBackend } from '../../../mappings/fossbilling/backend.js';
import { FossbillingConfigSchema } from '../../../mappings/fossbilling/config.js';
import { createFossbillingSeed, type FossbillingSimulator, startFossbillingSimulator } from '../../../simulators/fossbilling/server.js';
import { CTX, CUSTOMER, keyed, OTHER_CUSTOMER, rejectsWith } from './fake-call.js';

const PAGE = { page: 1, perPage: 25 };

t.test('FOSSBilling backend against the simulator', async (t) => {
  let sim: FossbillingSimulator;
  let backend: Backend;
  t.before(async () => {
    sim = await startFossbillingSimulator({ seed: createFossbillingSeed });
    const config = FossbillingConfigSchema.parse({ url: sim.url, apiToken: sim.apiToken, methodTimeoutsMs: { 'order/create': 400 } });
    backend = createFossbillingBackend(config);
  });
  t.teardown(async () => {
    await backend.close();
    await sim.close();
  });
  t.beforeEach(() => {
    sim.clearFaults();
    sim.calls.length = 0;
  });

  t.test('records no call when told not to (the sandbox serves for as long as it runs)', async () => {
    const quiet = await startFossbillingSimulator({ seed: createFossbillingSeed, recordCalls: false });
    const quietBackend = createFossbillingBackend(FossbillingConfigSchema.parse({ url: quiet.url, apiToken: quiet.apiToken }));
    try {
      assert.ok((await quietBackend.listProducts(CTX)).length > 0);
      assert.deepEqual(quiet.calls, []);
    } finally {
      await quietBackend.close();
      await quiet.close();
    }
    assert.ok((await backend.listProducts(CTX)).length > 0);
    assert.ok(sim.calls.length > 0);
  });

  t.test('serves every read endpoint in v1 shapes', async () => {
    AccountSchema.omit({ id: true }).parse(await backend.getAccount(CUSTOMER, CTX));
    const products = await backend.listProducts(CTX);
    assert.deepEqual(products.map((product) => product.id), ['1', '2', '4']);
    for (const product of products) ProductSchema.parse(product);
    ProductSchema.parse(await backend.getProduct('1', CTX));
    await rejectsWith(backend.getProduct('3', CTX), 'not_found');
    const services = await backend.listServices(CUSTOMER, PAGE, CTX);
    assert.deepEqual(services.items.map((service) => service.id), ['1', '2', '3', '4']);
    for (const service of services.items) ServiceSchema.parse(service);
    assert.deepEqual(services.items.map((service) => service.status), ['active', 'suspended', 'cancelled', 'pending']);
    // Order 4 links its unpaid invoice 2; order 1's invoice 1 is paid (the link gone), found by order; order 2 has none.
    const orders = await Promise.all(['4', '1', '2'].map((id) => backend.getOrder(CUSTOMER, id, CTX)));
    for (const order of orders) OrderSchema.parse(order);
    assert.deepEqual(orders.map((order) => [order.invoice_id, order.payment_status]), [['2', 'unpaid'], ['1', 'paid'], [null, null]]);
    const credentials = await backend.getCredentials(CUSTOMER, '1', CTX);
    assert.equal(credentials.username, 'user1');
    assert.equal(credentials.password, null);
    assert.deepEqual(await backend.getBalance(CUSTOMER, CTX), { credit: { amount: '12.50', currency: 'USD' } });
    const invoices = await backend.listInvoices(CUSTOMER, PAGE, CTX);
    assert.deepEqual(invoices.items.map((invoice) => invoice.id), ['2', '1']);
    for (const invoice of invoices.items) InvoiceSchema.parse(invoice);
    const document = await backend.getInvoiceDocument(CUSTOMER, '1', CTX);
    const pdf = await renderInvoicePdf(document, { name: 'Host Co', addressLines: ['1 Main St'] });
    assert.equal(Buffer.from(pdf).subarray(0, 5).toString(), '%PDF-');
    assert.equal(await backend.ping(), true);
  });

  t.test('pages services with FOSSBilling\'s page/per_page', async () => {
    const second = await backend.listServices(CUSTOMER, { page: 2, perPage: 3 }, CTX);
    assert.equal(second.total, 4);
    assert.deepEqual(second.items.map((service) => service.id), ['4']);
  });

  t.test('keeps each client to its own records', async () => {
    const services = await backend.listServices(OTHER_CUSTOMER, PAGE, CTX);
    assert.deepEqual(services.items.map((service) => service.id), ['5']);
    await rejectsWith(backend.getService(OTHER_CUSTOMER, '1', CTX), 'not_found');
    await rejectsWith(backend.getOrder(OTHER_CUSTOMER, '1', CTX), 'not_found');
    await rejectsWith(backend.getCredentials(OTHER_CUSTOMER, '1', CTX), 'not_found');
    await rejectsWith(backend.runServiceAction(OTHER_CUSTOMER, '1', 'suspend', CTX), 'not_found');
    await rejectsWith(backend.getInvoiceDocument(OTHER_CUSTOMER, '1', CTX), 'not_found');
    await rejectsWith(backend.getService(CUSTOMER, '5', CTX), 'not_found');
    assert.deepEqual((await backend.listInvoices(OTHER_CUSTOMER, PAGE, CTX)).items.map((invoice) => invoice.id), ['3']);
    assert.equal(sim.state.orders.find((order) => order.id === 1)?.status, 'active');
  });

  t.test('places an order and finds it again by its key', async () => {
    const order = await backend.placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'monthly', hostname: 'new.example.com' }, keyed('k-place'));
    // Paid from Ada's credit at once, and its invoice's renew task fails it: pending (simulator-credit.test.ts).
    assert.equal(order.status, 'pending');
    assert.deepEqual(order.service_ids, [order.id]);
    const service = await backend.getService(CUSTOMER, order.id, CTX);
    assert.equal(service.hostname, 'new.example.com');
    assert.deepEqual(await backend.findOrderByIdempotencyKey(CUSTOMER, keyed('k-place')), { kind: 'found', order });
    assert.deepEqual(await backend.findOrderByIdempotencyKey(OTHER_CUSTOMER, keyed('k-place')), { kind: 'absent' });
    assert.deepEqual(await backend.findOrderByIdempotencyKey(CUSTOMER, keyed('k-pla')), { kind: 'absent' });
    assert.deepEqual(await backend.findOrderByIdempotencyKey(CUSTOMER, keyed('k-place', 'rec-2')), { kind: 'absent' }, 'another use of the key');
    // Ada's balance (12.50) covers it: order/create approves the invoice with use_credits, which pays
    // it and clears the link (Invoice/Service.php tryPayWithCredits → markAsPaid); found by order.
    assert.equal(order.payment_status, 'paid');
    assert.ok(order.invoice_id !== null);
    assert.equal(sim.state.invoices.find((candidate) => String(candidate.id) === order.invoice_id)?.status, 'paid');
    const read = await backend.getOrder(CUSTOMER, order.id, CTX);
    assert.deepEqual([read.invoice_id, read.payment_status], [order.invoice_id, 'paid']);
    // Without the credit, its invoice is linked while unpaid; once paid, the link is gone and it is found by order.
    const ada = sim.state.clients.find((candidate) => candidate.id === 1);
    Object.assign(ada ?? {}, { balance: 0 });
    const unpaid = await backend.placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'monthly', hostname: 'unpaid.example.com' }, keyed('k-place-unpaid'));
    assert.equal(unpaid.payment_status, 'unpaid');
    const invoice = sim.state.invoices.find((candidate) => String(candidate.id) === unpaid.invoice_id);
    assert.ok(invoice, 'the simulator issued the invoice');
    Object.assign(invoice, { status: 'paid', paid_at: '2026-11-29 10:00:00' });
    const placed = sim.state.orders.find((candidate) => String(candidate.id) === unpaid.id);
    Object.assign(placed ?? {}, { unpaid_invoice_id: null });
    const paid = await backend.getOrder(CUSTOMER, unpaid.id, CTX);
    assert.deepEqual([paid.invoice_id, paid.payment_status], [unpaid.invoice_id, 'paid']);
  });

  t.test('an order that timed out after it was placed is found by reconciliation, not placed twice', async () => {
    sim.inject({ kind: 'stall_after_effect', ms: 2_000, method: 'order/create', times: 1 });
    const before = sim.state.orders.length;
    const error = await rejectsWith(backend.placeOrder(CUSTOMER, { product_id: '2', billing_cycle: 'onetime' }, keyed('k-stall')), 'timeout');
    assert.equal(error.outcomeUnknown, true);
    assert.equal(sim.state.orders.length, before + 1);
    const found = await backend.findOrderByIdempotencyKey(CUSTOMER, keyed('k-stall'));
    assert.equal(found.kind === 'found' && found.order.id, String(sim.state.orders.at(-1)?.id));
    assert.equal(sim.calls.filter((call) => call.method === 'order/create').length, 1);
  });

  t.test('an order refused before it was sent is not found by reconciliation', async () => {
    sim.inject({ kind: 'http500', method: 'order/create', times: 1 });
    await rejectsWith(backend.placeOrder(CUSTOMER, { product_id: '2', billing_cycle: 'onetime' }, keyed('k-500')), 'upstream_error');
    assert.deepEqual(await backend.findOrderByIdempotencyKey(CUSTOMER, keyed('k-500')), { kind: 'absent' });
  });

  t.test('runs the supported actions and refuses the rest', async () => {
    const suspended = ActionResultSchema.parse(await backend.runServiceAction(CUSTOMER, '1', 'suspend', CTX));
    assert.equal(suspended.service.status, 'suspended');
    await rejectsWith(backend.runServiceAction(CUSTOMER, '1', 'suspend', CTX), 'conflict');
    assert.equal((await backend.runServiceAction(CUSTOMER, '1', 'unsuspend', CTX)).service.status, 'active');
    const cancelled = await backend.runServiceAction(CUSTOMER, '1', 'cancel', CTX);
    assert.equal(cancelled.service.status, 'cancelled');
    // Done at once: nothing is pending any more (contract §6), as a cancelled service on WHMCS.
    assert.equal(cancelled.service.cancellation_requested, false);
    assert.equal(cancelled.service.cancellation_effective_on, null);
    await rejectsWith(backend.runServiceAction(CUSTOMER, '1', 'cancel_revoke', CTX), 'validation');
    await rejectsWith(backend.runServiceAction(CUSTOMER, '1', 'reboot', CTX), 'validation');
    await rejectsWith(backend.runServiceAction(CUSTOMER, '4', 'cancel', CTX), 'conflict');
  });

  t.test('a reset after sending, on the read and on its one retry, fails the read; the health probe reports down', async () => {
    sim.inject({ kind: 'reset', times: 2 });
    await rejectsWith(backend.getAccount(CUSTOMER, CTX), 'upstream_error');
    sim.inject({ kind: 'http500', method: 'product/get_types', times: 1 });
    assert.equal(await backend.ping(), false);
  });

  t.test('passes FOSSBilling\'s rate limit on with its Retry-After', async () => {
    sim.inject({ kind: 'rate_limited', retryAfterSeconds: 5, method: 'order/get', times: 1 });
    const error = await rejectsWith(backend.getService(CUSTOMER, '1', CTX), 'unavailable');
    assert.equal(error.retryAfterMs, 5_000);
  });

  t.test('adds latency without changing answers', async () => {
    sim.inject({ kind: 'latency', ms: 30, times: 1 });
    assert.equal((await backend.getService(CUSTOMER, '2', CTX)).status, 'suspended');
  });
});

t.test('FOSSBilling simulator quirks', async (t) => {
  t.test('counts an order once per meta row in unfiltered lists, as the SQL join does; the mapping shows each service once and counts services', async () => {
    const seed = createFossbillingSeed();
    seed.orders[0]!.meta = { gateway_idempotency_key: 'acct_1:k:rec-1', stock_reserved_qty: '1' };
    const sim = await startFossbillingSimulator({ seed });
    const backend = createFossbillingBackend(FossbillingConfigSchema.parse({ url: sim.url, apiToken: sim.apiToken }));
    try {
      const { items, total } = await backend.listServices(CUSTOMER, PAGE, CTX);
      assert.equal(total, 4);
      assert.deepEqual(items.map((service) => service.id), ['1', '2', '3', '4']);
      const search = await backend.findOrderByIdempotencyKey(CUSTOMER, keyed('k'));
      assert.equal(search.kind === 'found' && search.order.id, '1');
    } finally {
      await backend.close();
      await sim.close();
    }
  });
});

t.test('FOSSBilling catalog freshness', async (t) => {
  t.test('an order is checked against the catalog within its TTL, never a stale one (the product list may be stale)', async () => {
    const sim = await startFossbillingSimulator({ seed: createFossbillingSeed });
    let clock = 1_000_000;
    const backend = createFossbillingBackend(FossbillingConfigSchema.parse({ url: sim.url, apiToken: sim.apiToken }), { now: () => clock });
    try {
      await backend.listProducts(CTX);
      sim.state.products[0]!.payment.periods['1Y']!.enabled = false;
      // The refresh takes a while: long enough for the order to come while it runs.
      sim.inject({ kind: 'latency', ms: 50, method: 'product/get_list', times: 1 });
      clock += 5 * 60_000;
      // Past the TTL the list is still served from the cache while its refresh runs...
      const offered = (await backend.getProduct('1', CTX)).prices.map((price) => price.billing_cycle);
      assert.ok(offered.includes('annually'), 'the stale list still offers annually');
      // ...but the order waits for that refresh.
      await rejectsWith(backend.placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'annually' }, keyed('k-stale')), 'validation', /"annually" is not offered/);
      assert.deepEqual(sim.calls.map((call) => call.method).filter((method) => method !== 'client/get'), ['product/get_list', 'product/get_list']);
    } finally {
      await backend.close();
      await sim.close();
    }
  });
});

t.test('FOSSBilling simulator progress (sandbox events)', async (t) => {
  t.test('activates new orders and pays new invoices on its own; seed rows stay as they are', async () => {
    const sim = await startFossbillingSimulator({ progress: { afterMs: 100 } });
    const backend = createFossbillingBackend(FossbillingConfigSchema.parse({ url: sim.url, apiToken: sim.apiToken }));
    try {
      // No credit to pay it with: the order waits for the sandbox's staff.
      sim.state.clients.find((client) => client.id === 1)!.balance = 0;
      const order = await backend.placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'monthly', hostname: 'progress.example.com' }, keyed('k-progress'));
      assert.equal(order.status, 'pending');
      const unpaid = { ...sim.state.invoices[1]!, id: 99, status: 'unpaid' as const, paid_at: null };
      sim.state.invoices.push(unpaid);
      const deadline = Date.now() + 5_000;
      while ((await backend.getService(CUSTOMER, order.id, CTX)).status !== 'active' && Date.now() < deadline) await sleep(50);
      assert.equal((await backend.getService(CUSTOMER, order.id, CTX)).status, 'active');
      while (sim.state.invoices.find((invoice) => invoice.id === 99)?.status !== 'paid' && Date.now() < deadline) await sleep(50);
      assert.equal(sim.state.invoices.find((invoice) => invoice.id === 99)?.status, 'paid');
      assert.equal(sim.state.invoices.find((invoice) => invoice.id === 2)?.status, 'unpaid', 'seed invoices do not move');
    } finally {
      await backend.close();
      await sim.close();
    }
  });
});
