import assert from 'node:assert/strict';
import t from 'tap';
import { InvoiceSchema, OrderSchema, ProductSchema, ServiceSchema } from '../../../src/v1/schemas.js';
import { SERVICE_STATUS } from '../../../mappings/fossbilling/map.js';
import { backendWith, CTX, CUSTOMER, FakeCall, OTHER_CUSTOMER, rejectsWith } from './fake-call.js';
import * as answers from './fixtures/answers.js';

const catalog = answers.page([answers.hostingProduct, answers.onceProduct, answers.hiddenProduct, answers.disabledProduct, answers.domainProduct]);

function reads(): FakeCall {
  return new FakeCall()
    .answer('client/get', answers.client)
    .answer('product/get_list', catalog)
    .answer('order/get', answers.order)
    .answer('order/get_list', answers.page([answers.orderRow]))
    .answer('order/service', answers.hostingService)
    .answer('invoice/get_list', answers.page([answers.invoice]))
    .answer('invoice/get', answers.invoice);
}

t.test('FOSSBilling mapping on answers built from the source', async (t) => {
  t.test('lists only enabled, visible, non-domain products, with v1 cycles and decimal prices', async () => {
    const products = await backendWith(reads()).listProducts(CTX);
    assert.deepEqual(products.map((product) => product.id), ['1', '2']);
    for (const product of products) ProductSchema.parse(product);
    // 1W has no v1 cycle and 3M is disabled: neither is offered.
    assert.deepEqual(products[0]!.prices, [
      { currency: 'USD', billing_cycle: 'monthly', price: '4.99', setup_fee: '0.00' },
      { currency: 'USD', billing_cycle: 'annually', price: '49.90', setup_fee: '10.00' },
    ]);
    assert.equal(products[1]!.pay_type, 'onetime');
    assert.deepEqual(products[1]!.prices, [{ currency: 'USD', billing_cycle: 'onetime', price: '25.00', setup_fee: '5.00' }]);
  });

  t.test('honours an explicit product allow-list, hidden products included', async () => {
    const products = await backendWith(reads(), { publicProductIds: ['3'] }).listProducts(CTX);
    assert.deepEqual(products.map((product) => product.id), ['3']);
  });

  t.test('reads prices given as numbers as well as strings', async () => {
    const numeric = { ...answers.hostingProduct, pricing: { ...answers.hostingProduct.pricing, recurrent: { '1M': { price: 5, setup: 0, enabled: 1 } } } };
    const fake = reads().answer('product/get_list', answers.page([numeric]));
    const product = await backendWith(fake).getProduct('1', CTX);
    assert.deepEqual(product.prices, [{ currency: 'USD', billing_cycle: 'monthly', price: '5.00', setup_fee: '0.00' }]);
  });

  t.test('maps the account and the balance', async () => {
    const backend = backendWith(reads());
    assert.deepEqual(await backend.getAccount(CUSTOMER, CTX), { name: 'Ada Lovelace', company: 'Analytical Ltd', email: 'ada@example.com', status: 'active', currency: 'USD' });
    assert.deepEqual(await backend.getBalance(CUSTOMER, CTX), { credit: { amount: '12.50', currency: 'USD' } });
  });

  t.test('falls back to the default currency when the client has none', async () => {
    const fake = reads().answer('client/get', { ...answers.client, currency: null });
    const account = await backendWith(fake, { defaultCurrency: 'EUR' }).getAccount(CUSTOMER, CTX);
    assert.equal(account.currency, 'EUR');
  });

  t.test('maps an order (typed toApiArray) and the same order as a service', async () => {
    const backend = backendWith(reads());
    const order = OrderSchema.parse(await backend.getOrder(CUSTOMER, '7', CTX));
    assert.deepEqual(order, {
      id: '7',
      status: 'active',
      created_at: '2026-01-01T09:59:12Z',
      total: { amount: '4.99', currency: 'USD' },
      invoice_id: '12',
      payment_status: 'unpaid',
      service_ids: ['7'],
    });
    const service = ServiceSchema.parse(await backend.getService(CUSTOMER, '7', CTX));
    assert.equal(service.status, 'active');
    assert.equal(service.billing_cycle, 'monthly');
    assert.equal(service.hostname, 'site7.example.com');
    assert.equal(service.next_due_on, '2026-12-01');
    assert.equal(service.registered_on, '2026-01-01');
    assert.equal(JSON.stringify(service).includes('admin-only'), false);
  });

  t.test('converts server-local times with the configured zone', async () => {
    const order = await backendWith(reads(), { timeZone: 'Europe/Berlin' }).getOrder(CUSTOMER, '7', CTX);
    assert.equal(order.created_at, '2026-01-01T08:59:12Z');
  });

  t.test('maps services from SQL rows where every value is a string', async () => {
    const { items, total } = await backendWith(reads()).listServices(CUSTOMER, { page: 1, perPage: 25 }, CTX);
    assert.equal(total, 1);
    assert.equal(items[0]!.id, '7');
    assert.deepEqual(items[0]!.recurring_amount, { amount: '4.99', currency: 'USD' });
  });

  t.test('maps every order status of the source, and refuses an unknown one', async () => {
    for (const [status, expected] of Object.entries(SERVICE_STATUS)) {
      const fake = reads().answer('order/get', { ...answers.order, status });
      const service = await backendWith(fake).getService(CUSTOMER, '7', CTX);
      assert.equal(service.status, expected, status);
      // No cancellation pending in any of them: a canceled order's is done, not pending.
      assert.equal(service.cancellation_requested, false, status);
    }
    const fake = reads().answer('order/get', { ...answers.order, status: 'on_hold' });
    await rejectsWith(backendWith(fake).getService(CUSTOMER, '7', CTX), 'upstream_error');
    const order = await backendWith(fake).getOrder(CUSTOMER, '7', CTX);
    assert.equal(order.status, 'other');
  });

  t.test('a period with no v1 billing cycle (weekly, on by default in every version) is `other`, not a 502 for the service or its whole list page', async () => {
    for (const period of ['1W', '4Y', '5Y']) {
      const fake = reads().answer('order/get', { ...answers.order, period }).answer('order/get_list', answers.page([{ ...answers.orderRow, period }, { ...answers.orderRow, id: '8' }]));
      const backend = backendWith(fake);
      assert.equal((await backend.getService(CUSTOMER, '7', CTX)).billing_cycle, 'other', period);
      const { items } = await backend.listServices(CUSTOMER, { page: 1, perPage: 25 }, CTX);
      assert.deepEqual(items.map((service) => [service.id, service.billing_cycle]).sort(), [['7', 'other'], ['8', 'monthly']], period);
    }
  });

  t.test('survives missing optional fields', async () => {
    const { unpaid_invoice_id: _a, expires_at: _b, activated_at: _c, total: _d, meta: _e, config: _f, ...bare } = answers.order;
    // No invoice links the order, and the search for its own finds none.
    const fake = reads().answer('order/get', bare).answer('invoice/get_list', answers.page([]));
    const backend = backendWith(fake);
    const order = await backend.getOrder(CUSTOMER, '7', CTX);
    assert.equal(order.invoice_id, null);
    assert.equal(order.payment_status, null);
    assert.deepEqual(order.total, { amount: '4.99', currency: 'USD' });
    const service = await backend.getService(CUSTOMER, '7', CTX);
    assert.equal(service.next_due_on, null);
    assert.equal(service.hostname, null);
    assert.equal(service.registered_on, '2026-01-01');
  });

  t.test('never shows another client\'s order, though order/get has no owner filter', async () => {
    const fake = reads().answer('order/get', { ...answers.order, client_id: 2 });
    await rejectsWith(backendWith(fake).getOrder(CUSTOMER, '7', CTX), 'not_found');
    await rejectsWith(backendWith(fake).getService(CUSTOMER, '7', CTX), 'not_found');
    await rejectsWith(backendWith(fake).getCredentials(CUSTOMER, '7', CTX), 'not_found');
    assert.equal(fake.methods().includes('order/service'), false);
  });

  t.test('filters lists by client id, and refuses an answer that holds other clients\' rows', async () => {
    const fake = reads().answer('order/get_list', answers.page([answers.orderRow, { ...answers.orderRow, id: '8', client_id: '2' }]));
    await rejectsWith(backendWith(fake).listServices(CUSTOMER, { page: 2, perPage: 10 }, CTX), 'upstream_error');
    const listCall = fake.calls.find((entry) => entry.method === 'order/get_list');
    // Read whole at FOSSBilling's largest page: its total counts joined meta rows (see listServices).
    assert.deepEqual(listCall?.params, { client_id: '1', page: 1, per_page: 500 });
  });

  t.test('gives credentials from the hosting service, never a password', async () => {
    const credentials = await backendWith(reads()).getCredentials(CUSTOMER, '7', CTX);
    assert.deepEqual(credentials, { service_id: '7', username: 'site7usr', password: null, hostname: 'site7.example.com', ip_addresses: ['192.0.2.10'] });
  });

  t.test('answers empty credentials when the order has no service (result null)', async () => {
    const fake = reads().answer('order/service', null);
    const credentials = await backendWith(fake).getCredentials(CUSTOMER, '7', CTX);
    assert.deepEqual(credentials, { service_id: '7', username: null, password: null, hostname: 'site7.example.com', ip_addresses: [] });
  });

  t.test('maps invoices (float totals, string tax rate) and their documents', async () => {
    const backend = backendWith(reads());
    const { items } = await backend.listInvoices(CUSTOMER, { page: 1, perPage: 25 }, CTX);
    const listed = InvoiceSchema.parse(items[0]);
    assert.deepEqual(listed, {
      id: '12',
      number: 'FOSS00012',
      status: 'unpaid',
      issued_on: '2026-02-01',
      due_on: '2026-02-08',
      paid_at: null,
      subtotal: { amount: '4.99', currency: 'USD' },
      tax: { amount: '1.00', currency: 'USD' },
      credit: { amount: '0.00', currency: 'USD' },
      total: { amount: '5.99', currency: 'USD' },
    });
    const document = await backend.getInvoiceDocument(CUSTOMER, '12', CTX);
    assert.deepEqual(document.balance, { amount: '5.99', currency: 'USD' });
    assert.equal(document.taxes[0]?.rate, '20.00');
    assert.deepEqual(document.items, [{ description: 'Shared Hosting Starter (1M)', amount: { amount: '4.99', currency: 'USD' }, taxed: true }]);
    // The buyer as the invoice holds it (Invoice/Service.php copies the client's address onto it).
    assert.deepEqual(document.customer, { name: 'Ada Lovelace', company: 'Analytical Ltd', email: 'ada@example.com', address: ['1 Main St', 'N1 London', 'GB'], tax_id: null });
  });

  t.test('rounds PHP float amounts to the cent (noisy variants), and computes a missing total exactly', async () => {
    const fake = reads()
      .answer('client/get', answers.noisyClient)
      .answer('order/get', answers.noisyOrder)
      .answer('order/get_list', answers.page([{ ...answers.orderRow, quantity: '3', price: '19.90', total: 59.699999999999996 }]))
      .answer('invoice/get', answers.noisyInvoice)
      .answer('invoice/get_list', answers.page([answers.noisyInvoice]));
    const backend = backendWith(fake);
    const usd = (amount: string) => ({ amount, currency: 'USD' });
    assert.deepEqual((await backend.getOrder(CUSTOMER, '7', CTX)).total, usd('59.70'));
    assert.deepEqual((await backend.getService(CUSTOMER, '7', CTX)).recurring_amount, usd('59.70'));
    assert.deepEqual((await backend.listServices(CUSTOMER, { page: 1, perPage: 25 }, CTX)).items[0]!.recurring_amount, usd('59.70'));
    assert.deepEqual(await backend.getBalance(CUSTOMER, CTX), { credit: usd('0.30') });
    const listed = InvoiceSchema.parse((await backend.listInvoices(CUSTOMER, { page: 1, perPage: 25 }, CTX)).items[0]);
    assert.deepEqual([listed.subtotal, listed.tax, listed.total], [usd('8.85'), usd('1.77'), usd('10.62')]);
    const document = await backend.getInvoiceDocument(CUSTOMER, '12', CTX);
    assert.deepEqual([document.total, document.balance, document.items[0]!.amount], [usd('10.62'), usd('10.62'), usd('8.85')]);
    // Without FOSSBilling's total, price × quantity is computed from the decimal strings, not as floats.
    const { total: _total, ...untotalled } = answers.noisyOrder;
    const computed = await backendWith(reads().answer('order/get', untotalled)).getOrder(CUSTOMER, '7', CTX);
    assert.deepEqual(computed.total, usd('59.70'));
  });

  t.test('keeps exact amounts and tax rates as given, and a float\'s cents as PHP rounds them', async () => {
    const invoice = { ...answers.invoice, subtotal: '19.90', tax: 0.285, total: -2.345, credit: 5.551115123125783e-17, taxrate: '7.125' };
    const fake = reads().answer('invoice/get', invoice).answer('invoice/get_list', answers.page([invoice]));
    const document = await backendWith(fake).getInvoiceDocument(CUSTOMER, '12', CTX);
    assert.deepEqual([document.subtotal.amount, document.tax.amount, document.total.amount, document.credit.amount], ['19.90', '0.29', '-2.35', '0.00']);
    assert.equal(document.taxes[0]?.rate, '7.125');
    const whole = await backendWith(reads().answer('invoice/get', { ...answers.invoice, taxrate: 20 })).getInvoiceDocument(CUSTOMER, '12', CTX);
    assert.equal(whole.taxes[0]?.rate, '20.00');
  });

  t.test('converts server-local times on DST change days as the WHMCS mapping does', async () => {
    const createdAt = async (local: string, timeZone: string) => {
      const fake = reads().answer('order/get', { ...answers.order, created_at: local });
      return (await backendWith(fake, { timeZone }).getOrder(CUSTOMER, '7', CTX)).created_at;
    };
    const paidAt = async (local: string, timeZone: string) => {
      const fake = reads().answer('invoice/get_list', answers.page([{ ...answers.invoice, status: 'paid', paid_at: local }]));
      return (await backendWith(fake, { timeZone }).listInvoices(CUSTOMER, { page: 1, perPage: 25 }, CTX)).items[0]!.paid_at;
    };
    // Before the change back (still CEST, +2) and after the change forward (EDT, -4).
    assert.equal(await createdAt('2024-10-27 01:30:00', 'Europe/Berlin'), '2024-10-26T23:30:00Z');
    assert.equal(await paidAt('2024-10-27 01:30:00', 'Europe/Berlin'), '2024-10-26T23:30:00Z');
    assert.equal(await createdAt('2024-03-10 04:00:00', 'America/New_York'), '2024-03-10T08:00:00Z');
    assert.equal(await paidAt('2024-03-10 04:00:00', 'America/New_York'), '2024-03-10T08:00:00Z');
    assert.equal(await createdAt('2024-03-31 01:30:00', 'Europe/Berlin'), '2024-03-31T00:30:00Z');
    // A repeated time: the earlier occurrence, east and west of UTC.
    assert.equal(await createdAt('2024-10-27 02:30:00', 'Europe/Berlin'), '2024-10-27T00:30:00Z');
    assert.equal(await paidAt('2024-11-03 01:30:00', 'America/New_York'), '2024-11-03T05:30:00Z');
    // A skipped time: moved forward by the change, east and west of UTC.
    assert.equal(await createdAt('2024-03-31 02:30:00', 'Europe/Berlin'), '2024-03-31T01:30:00Z');
    assert.equal(await paidAt('2024-03-10 02:30:00', 'America/New_York'), '2024-03-10T07:30:00Z');
    // A time no calendar has is no time (it was once moved to 1 March).
    await rejectsWith(backendWith(reads().answer('order/get', { ...answers.order, created_at: '2024-02-30 10:00:00' })).getOrder(CUSTOMER, '7', CTX), 'upstream_error');
    assert.equal(await paidAt('2024-13-01 00:00:00', 'UTC'), null);
  });

  t.test('shows unapproved invoices as drafts', async () => {
    const fake = reads().answer('invoice/get_list', answers.page([{ ...answers.invoice, approved: false }]));
    const { items } = await backendWith(fake).listInvoices(CUSTOMER, { page: 1, perPage: 25 }, CTX);
    assert.equal(items[0]!.status, 'draft');
  });

  t.test('never shows another client\'s invoice, though invoice/get has no owner filter', async () => {
    const fake = reads().answer('client/get', (params: Record<string, unknown>) => ({ ...answers.client, id: Number(params.id) }));
    await rejectsWith(backendWith(fake).getInvoiceDocument(OTHER_CUSTOMER, '12', CTX), 'not_found');
  });

  t.test('maps FOSSBilling error messages and codes to v1 kinds', async () => {
    await rejectsWith(backendWith(reads().answer('order/get', FakeCall.error(answers.messages.orderNotFound))).getOrder(CUSTOMER, '99', CTX), 'not_found');
    await rejectsWith(backendWith(reads().answer('invoice/get', FakeCall.error(answers.messages.invoiceNotFound))).getInvoiceDocument(CUSTOMER, '99', CTX), 'not_found');
    // A method FOSSBilling does not have says nothing of the order: not a 404 (the client would take
    // its order for absent), but the upstream not set up as the mapping needs, for the operator.
    for (const code of [740, 715]) {
      const missing = await rejectsWith(backendWith(reads().answer('order/get', FakeCall.error(answers.messages.noSuchMethod, code))).getOrder(CUSTOMER, '7', CTX), 'upstream_error');
      assert.match(missing.operatorMessage ?? '', /lacks a method the gateway uses/);
    }
    const misconfigured = await rejectsWith(
      backendWith(reads().answer('client/get', FakeCall.error(answers.messages.clientNotFound))).getAccount(CUSTOMER, CTX),
      'upstream_error',
      /not set up correctly/,
    );
    assert.match(misconfigured.operatorMessage ?? '', /FOSSBilling client 1/);
  });

  t.test('refuses an answer of the wrong shape without echoing it', async () => {
    const fake = reads().answer('client/get', { id: 1, email: ['not', 'a', 'string'] });
    const error = await rejectsWith(backendWith(fake).getAccount(CUSTOMER, CTX), 'upstream_error');
    assert.equal(error.detail, 'The billing system answered with something unreadable.');
  });

  t.test('refuses a customer without a numeric client id before any call', async () => {
    const fake = reads();
    await rejectsWith(backendWith(fake).getAccount({ accountId: 'acct_x', upstreamId: 'abc' }, CTX), 'upstream_error');
    assert.equal(fake.calls.length, 0);
  });
});
