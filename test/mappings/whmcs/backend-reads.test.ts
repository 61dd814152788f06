import assert from 'node:assert/strict';
import t from 'tap';
import {
  AccountSchema,
  InvoiceSchema,
  OrderSchema,
  ProductSchema,
  ServiceSchema,
  CredentialsSchema,
} from '../../../src/v1/schemas.js';
import { type Answer, CTX, CUSTOMER, FakeWhmcs, OTHER_CUSTOMER, SERVICE_PASSWORD, rejectsWith } from './fake-whmcs.js';
import * as answers from './fixtures/answers.js';
import * as variants from './fixtures/variants.js';

/** Answers only for client 1, as WHMCS does when its owner filter is ANDed. */
const ownedBy = (param: string, owned: unknown, empty: unknown) => (params: URLSearchParams) => (params.get(param) === '1' ? owned : empty);

t.test('WHMCS backend: account and balance', async (t) => {
  let whmcs: FakeWhmcs;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
  });
  t.afterEach(() => whmcs.close());

  t.test('getAccount maps the recorded GetClientsDetails of the customer', async () => {
    whmcs.answer('GetClientsDetails', answers.clientDetails);
    const account = await whmcs.backend().getAccount(CUSTOMER, CTX);
    assert.deepEqual(account, { name: 'Test Client', company: null, email: 'test@example.com', status: 'active', currency: 'USD' });
    AccountSchema.omit({ id: true }).parse(account);
    assert.equal(whmcs.requests('GetClientsDetails')[0]?.get('clientid'), '1');
  });

  t.test('decodes entities in names and uses the top-level copy when `client` is missing', async () => {
    const { client: _nested, ...topLevel } = answers.clientDetails;
    whmcs.answer('GetClientsDetails', { ...topLevel, firstname: 'Ren&eacute;e', lastname: 'O&#039;Brien', companyname: 'Smith &amp; Sons', status: 'Closed' });
    const account = await whmcs.backend().getAccount(CUSTOMER, CTX);
    assert.equal(account.name, "Ren&eacute;e O'Brien", 'unknown named entities are left alone');
    assert.equal(account.company, 'Smith & Sons');
    assert.equal(account.status, 'closed');
  });

  t.test('a client WHMCS does not know is the operator’s problem, not the caller’s', async () => {
    whmcs.answer('GetClientsDetails', answers.clientNotFound);
    const error = await rejectsWith(whmcs.backend().getAccount(CUSTOMER, CTX), 'upstream_error');
    assert.match(error.operatorMessage ?? '', /account acme maps to WHMCS client 1/);
  });

  t.test('never calls WHMCS for a customer without a valid clientid (it would answer for all clients)', async () => {
    await rejectsWith(whmcs.backend().getAccount({ accountId: 'x', upstreamId: '' }, CTX), 'upstream_error');
    await rejectsWith(whmcs.backend().listServices({ accountId: 'x', upstreamId: '0' }, { page: 1, perPage: 25 }, CTX), 'upstream_error');
    assert.equal(whmcs.requests().length, 0);
  });

  for (const [name, answer] of [
    ['a string where the client should be', { result: 'success', client: 'oops' }],
    ['a currency that is not a code', { ...answers.clientDetails, client: { ...answers.clientDetails.client, currency_code: 'us dollar' } }],
    ['an unknown client status', { ...answers.clientDetails, client: { ...answers.clientDetails.client, status: 'Weird' } }],
    ['a credit that is not a decimal', { ...answers.clientDetails, client: { ...answers.clientDetails.client, credit: '1e400' } }],
  ] as const) {
    t.test(`a hostile answer (${name}) is an upstream error`, async () => {
      whmcs.answer('GetClientsDetails', answer);
      const error = await rejectsWith(whmcs.backend().getAccount(CUSTOMER, CTX), 'upstream_error');
      assert.match(error.operatorMessage ?? '', /unexpected shape/);
    });
  }

  t.test('a client answer without `credit` serves /v1/me; only the balance, which reads it, fails naming it', async () => {
    const { credit: _credit, ...client } = answers.clientDetails.client;
    whmcs.answer('GetClientsDetails', { ...answers.clientDetails, client });
    const backend = whmcs.backend();
    assert.equal((await backend.getAccount(CUSTOMER, CTX)).currency, 'USD');
    const error = await rejectsWith(backend.getBalance(CUSTOMER, CTX), 'upstream_error');
    assert.match(error.operatorMessage ?? '', /WHMCS GetClientsDetails answer has no client\.credit/);
  });

  t.test('getBalance: the credit in the client currency, as an exact decimal', async () => {
    whmcs.answer('GetClientsDetails', { ...answers.clientDetails, client: { ...answers.clientDetails.client, credit: '12.5', currency_code: 'EUR' } });
    assert.deepEqual(await whmcs.backend().getBalance(CUSTOMER, CTX), { credit: { amount: '12.50', currency: 'EUR' } });
  });
});

t.test('WHMCS backend: products', async (t) => {
  let whmcs: FakeWhmcs;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
  });
  t.afterEach(() => whmcs.close());

  t.test('lists only the allow-listed products, mapped', async () => {
    whmcs.answer('GetProducts', answers.catalog);
    const products = await whmcs.backend().listProducts(CTX);
    assert.deepEqual(
      products.map((product) => product.id),
      ['1', '2', '3', '4'],
    );
    for (const product of products) ProductSchema.parse(product);
    const [vpsS] = products;
    assert.deepEqual(vpsS, {
      id: '1',
      name: 'VPS S',
      description: '2 vCPU\n4 GB RAM',
      type: 'server',
      pay_type: 'recurring',
      prices: [
        { currency: 'USD', billing_cycle: 'monthly', price: '9.99', setup_fee: '0.00' },
        { currency: 'USD', billing_cycle: 'annually', price: '99.00', setup_fee: '0.00' },
      ],
      config_options: [
        {
          id: '4',
          name: 'Operating System',
          type: 'dropdown',
          min_quantity: null,
          max_quantity: null,
          choices: [
            {
              id: '11',
              name: 'Debian 12',
              prices: [
                { currency: 'USD', billing_cycle: 'monthly', price: '0.00', setup_fee: '0.00' },
                { currency: 'USD', billing_cycle: 'annually', price: '0.00', setup_fee: '0.00' },
              ],
            },
          ],
        },
      ],
    });
  });

  t.test('decodes names, strips description HTML, maps every option type and currency', async () => {
    whmcs.answer('GetProducts', answers.catalog);
    const product = await whmcs.backend().getProduct('2', CTX);
    assert.equal(product.name, 'VPS M & Backup');
    assert.equal(product.description, `4 vCPU\n8 GB RAM\nTom's "pick"`);
    assert.deepEqual(product.prices, [
      { currency: 'USD', billing_cycle: 'monthly', price: '19.99', setup_fee: '0.00' },
      { currency: 'USD', billing_cycle: 'annually', price: '199.00', setup_fee: '5.00' },
      { currency: 'EUR', billing_cycle: 'monthly', price: '18.50', setup_fee: '0.00' },
    ]);
    assert.deepEqual(
      product.config_options.map(({ id, name, type, min_quantity, max_quantity }) => ({ id, name, type, min_quantity, max_quantity })),
      [
        { id: '4', name: 'Operating System', type: 'dropdown', min_quantity: null, max_quantity: null },
        { id: '5', name: 'Location', type: 'radio', min_quantity: null, max_quantity: null },
        { id: '6', name: 'Backups', type: 'yesno', min_quantity: null, max_quantity: null },
        { id: '8', name: 'Extra IPs', type: 'quantity', min_quantity: 1, max_quantity: 8 },
      ],
    );
    const windows = product.config_options[0]?.choices[1];
    assert.equal(windows?.name, 'Windows & Co');
    assert.deepEqual(windows?.prices, [
      { currency: 'USD', billing_cycle: 'monthly', price: '10.00', setup_fee: '0.00' },
      { currency: 'USD', billing_cycle: 'annually', price: '100.00', setup_fee: '0.00' },
    ]);
  });

  t.test('one-time products are priced in `monthly`; free products cost 0.00', async () => {
    whmcs.answer('GetProducts', answers.catalog);
    const backend = whmcs.backend();
    assert.deepEqual((await backend.getProduct('3', CTX)).prices, [
      { currency: 'USD', billing_cycle: 'onetime', price: '49.00', setup_fee: '10.00' },
    ]);
    const free = await backend.getProduct('4', CTX);
    assert.equal(free.pay_type, 'free');
    assert.equal(free.type, 'hosting');
    assert.deepEqual(free.prices, [{ currency: 'USD', billing_cycle: 'free', price: '0.00', setup_fee: '0.00' }]);
    assert.deepEqual(free.config_options, []);
  });

  t.test('a hidden or unknown product is not found; the catalog is read once (cached)', async () => {
    whmcs.answer('GetProducts', answers.catalog);
    const backend = whmcs.backend();
    await rejectsWith(backend.getProduct('9', CTX), 'not_found');
    await rejectsWith(backend.getProduct('77', CTX), 'not_found');
    await backend.listProducts(CTX);
    assert.equal(whmcs.requests('GetProducts').length, 1);
  });

  t.test('no products at all (the `products` key is absent)', async () => {
    whmcs.answer('GetProducts', answers.productsEmpty);
    assert.deepEqual(await whmcs.backend().listProducts(CTX), []);
  });

  for (const [name, products] of [
    ['a negative product id', { product: [{ ...answers.vpsS, pid: -1 }] }],
    ['a string instead of the product list', 'garbage'],
    ['an unknown config option type', { product: [{ ...answers.vpsS, configoptions: { configoption: [{ ...answers.vpsS.configoptions.configoption[0], type: '7' }] } }] }],
    ['a price that is not a number', { product: [{ ...answers.vpsS, pricing: { USD: { ...answers.vpsS.pricing.USD, monthly: 'free!' } } }] }],
  ] as const) {
    t.test(`a hostile catalog (${name}) is an upstream error`, async () => {
      whmcs.answer('GetProducts', { result: 'success', totalresults: 1, products });
      await rejectsWith(whmcs.backend().listProducts(CTX), 'upstream_error');
    });
  }
});

t.test('WHMCS backend: orders', async (t) => {
  let whmcs: FakeWhmcs;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
    whmcs.answer('GetClientsDetails', answers.clientDetailsFor);
  });
  t.afterEach(() => whmcs.close());

  t.test('getOrder maps the recorded order, filtered by id and userid', async () => {
    whmcs.answer('GetOrders', answers.orders);
    const order = await whmcs.backend().getOrder(CUSTOMER, '1', CTX);
    assert.deepEqual(order, {
      id: '1',
      status: 'active',
      created_at: '2020-09-23T13:59:35Z',
      total: { amount: '8.00', currency: 'USD' },
      invoice_id: '1',
      payment_status: 'paid',
      service_ids: ['1'],
    });
    OrderSchema.parse(order);
    const sent = whmcs.requests('GetOrders')[0];
    assert.equal(sent?.get('id'), '1');
    assert.equal(sent?.get('userid'), '1');
  });

  t.test('converts the order time from the WHMCS server zone', async () => {
    whmcs.answer('GetOrders', answers.orders);
    const order = await whmcs.backend({ timeZone: 'Europe/Berlin' }).getOrder(CUSTOMER, '1', CTX);
    assert.equal(order.created_at, '2020-09-23T11:59:35Z');
  });

  t.test('custom statuses become `other`; no invoice and no payment status become null', async () => {
    const recorded = answers.orderRow;
    whmcs.answer('GetOrders', {
      ...answers.orders,
      orders: { order: [{ ...recorded, status: 'In Review', paymentstatus: null, invoiceid: 0, lineitems: { lineitem: [] } }] },
    });
    const order = await whmcs.backend().getOrder(CUSTOMER, '1', CTX);
    assert.equal(order.status, 'other');
    assert.equal(order.invoice_id, null);
    assert.equal(order.payment_status, null);
    assert.deepEqual(order.service_ids, []);
  });

  t.test('another client’s order is not found (WHMCS ANDs id and userid)', async () => {
    whmcs.answer('GetOrders', ownedBy('userid', answers.orders, answers.ordersEmpty));
    await rejectsWith(whmcs.backend().getOrder(OTHER_CUSTOMER, '1', CTX), 'not_found');
    assert.equal(whmcs.requests('GetOrders')[0]?.get('userid'), '2');
  });

  t.test('an answer with another client’s order is not found even if WHMCS ignored the filter; the operator is told', async () => {
    whmcs.answer('GetOrders', answers.orders);
    const error = await rejectsWith(whmcs.backend().getOrder(OTHER_CUSTOMER, '1', CTX), 'not_found');
    assert.match(error.operatorMessage ?? '', /GetOrders returned records of another client than 2; the owner filter was ignored/);
  });

  t.test('an id that is not a WHMCS id is not found without asking WHMCS', async () => {
    await rejectsWith(whmcs.backend().getOrder(CUSTOMER, '1 OR 1=1', CTX), 'not_found');
    assert.equal(whmcs.requests('GetOrders').length, 0);
  });
});

t.test('WHMCS backend: services and credentials', async (t) => {
  let whmcs: FakeWhmcs;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
    whmcs.answer('GetClientsDetails', answers.clientDetailsFor);
  });
  t.afterEach(() => whmcs.close());

  /** The services and, unless given, no cancellation requests. */
  function services(answer: Answer, cancellations: Answer = answers.cancelledPackagesEmpty): void {
    whmcs.answer('GetClientsProducts', answer).answer('GetCancelledPackages', cancellations);
  }

  t.test('listServices pages explicitly and maps the recorded service without its secrets', async () => {
    services(answers.clientsProducts([answers.service], 26));
    const page = await whmcs.backend().listServices(CUSTOMER, { page: 2, perPage: 25 }, CTX);
    assert.equal(page.total, 26);
    assert.deepEqual(page.items[0], {
      id: '1',
      product_id: '1',
      product_name: 'VPS S',
      order_id: '1',
      status: 'active',
      hostname: 'vps1.example.com',
      ip_addresses: ['198.51.100.10'],
      billing_cycle: 'monthly',
      recurring_amount: { amount: '9.99', currency: 'USD' },
      registered_on: '2024-01-01',
      next_due_on: '2024-02-01',
      cancellation_requested: false,
      cancellation_effective_on: null,
      config_options: [{ name: 'Operating System', value: 'Debian 12' }],
    });
    ServiceSchema.parse(page.items[0]);
    const text = JSON.stringify(page);
    for (const hidden of [SERVICE_PASSWORD, '192.0.2.5', 'node1.example.com', 'banktransfer', 'Node1']) assert.ok(!text.includes(hidden), hidden);
    const sent = whmcs.requests('GetClientsProducts')[0];
    assert.equal(sent?.get('clientid'), '1');
    assert.equal(sent?.get('limitstart'), '25');
    assert.equal(sent?.get('limitnum'), '25');
  });

  t.test('no services: `products` is the empty string', async () => {
    services(answers.clientsProductsEmpty);
    assert.deepEqual(await whmcs.backend().listServices(CUSTOMER, { page: 1, perPage: 25 }, CTX), { items: [], total: 0 });
  });

  t.test('maps billing cycle spellings, Completed, placeholder dates and the address lists', async () => {
    const variants = [
      { ...answers.service, id: '2', billingcycle: 'Semi-Annually', status: 'Completed' },
      { ...answers.service, id: '3', billingcycle: 'One Time', nextduedate: '0000-00-00', assignedips: '198.51.100.11\r\n198.51.100.12, 198.51.100.10\n' },
      { ...answers.service, id: '4', billingcycle: 'Free Account', status: 'Suspended', regdate: '0000-00-00', domain: '', orderid: '0' },
      { ...answers.service, id: '5', billingcycle: 'Free', status: 'Fraud', dedicatedip: '' },
    ];
    services(answers.clientsProducts(variants));
    const { items } = await whmcs.backend().listServices(CUSTOMER, { page: 1, perPage: 25 }, CTX);
    assert.deepEqual(
      items.map((item) => [item.billing_cycle, item.status]),
      [
        ['semiannually', 'active'],
        ['onetime', 'active'],
        ['free', 'suspended'],
        ['free', 'fraud'],
      ],
    );
    assert.equal(items[1]?.next_due_on, null);
    assert.deepEqual(items[1]?.ip_addresses, ['198.51.100.10', '198.51.100.11', '198.51.100.12']);
    assert.equal(items[2]?.registered_on, null);
    assert.equal(items[2]?.hostname, null);
    assert.equal(items[2]?.order_id, null);
    assert.deepEqual(items[3]?.ip_addresses, []);
  });

  t.test('shows a pending cancellation and when it takes effect; ignores processed ones', async () => {
    const request = answers.cancellationRow;
    services(answers.clientsProducts([answers.service, { ...answers.service, id: '2', status: 'Cancelled' }]), {
      ...answers.cancelledPackages,
      packages: { package: [request, { ...request, relid: '2' }] },
    });
    const { items } = await whmcs.backend().listServices(CUSTOMER, { page: 1, perPage: 25 }, CTX);
    assert.equal(items[0]?.cancellation_requested, true);
    assert.equal(items[0]?.cancellation_effective_on, '2024-02-01');
    assert.equal(items[1]?.cancellation_requested, false, 'a cancelled service has no pending request');
  });

  t.test('reads every page of cancellation requests', async () => {
    const request = answers.cancellationRow;
    services(answers.clientsProducts([{ ...answers.service, id: '1500' }]), (params: URLSearchParams) => ({
      ...answers.cancelledPackages,
      totalresults: '1001',
      packages: { package: [{ ...request, relid: params.get('limitstart') === '0' ? '1' : '1500' }] },
    }));
    const { items } = await whmcs.backend().listServices(CUSTOMER, { page: 1, perPage: 25 }, CTX);
    assert.equal(items[0]?.cancellation_requested, true);
    assert.deepEqual(
      whmcs.requests('GetCancelledPackages').map((params) => params.get('limitstart')),
      ['0', '1000'],
    );
  });

  t.test('without cancellation tracking, GetCancelledPackages is never called', async () => {
    whmcs.answer('GetClientsProducts', answers.clientsProducts([answers.service]));
    const service = await whmcs.backend({ trackCancellations: false }).getService(CUSTOMER, '1', CTX);
    assert.equal(service.cancellation_requested, false);
    assert.equal(whmcs.requests('GetCancelledPackages').length, 0);
  });

  t.test('getService filters by clientid and serviceid; another client’s service is not found', async () => {
    services(ownedBy('clientid', answers.clientsProducts([answers.service]), answers.clientsProductsEmpty));
    const backend = whmcs.backend();
    assert.equal((await backend.getService(CUSTOMER, '1', CTX)).id, '1');
    await rejectsWith(backend.getService(OTHER_CUSTOMER, '1', CTX), 'not_found');
    const sent = whmcs.requests('GetClientsProducts')[1];
    assert.equal(sent?.get('clientid'), '2');
    assert.equal(sent?.get('serviceid'), '1');
    assert.equal(sent?.get('limitnum'), '1');
  });

  t.test('a listing with another client’s service is refused, never shown', async () => {
    services(answers.clientsProducts([answers.service, { ...answers.service, id: '2', clientid: '2' }]));
    await rejectsWith(whmcs.backend().listServices(CUSTOMER, { page: 1, perPage: 25 }, CTX), 'upstream_error');
  });

  t.test('getCredentials returns the password, only there', async () => {
    whmcs.answer('GetClientsProducts', ownedBy('clientid', answers.clientsProducts([answers.service]), answers.clientsProductsEmpty));
    const backend = whmcs.backend();
    const credentials = await backend.getCredentials(CUSTOMER, '1', CTX);
    assert.deepEqual(credentials, {
      service_id: '1',
      username: 'root',
      password: SERVICE_PASSWORD,
      hostname: 'vps1.example.com',
      ip_addresses: ['198.51.100.10'],
    });
    CredentialsSchema.parse(credentials);
    await rejectsWith(backend.getCredentials(OTHER_CUSTOMER, '1', CTX), 'not_found');
  });

  t.test('a hostile service (unknown status) is an upstream error', async () => {
    services(answers.clientsProducts([{ ...answers.service, status: 'Exploded' }]));
    await rejectsWith(whmcs.backend().getService(CUSTOMER, '1', CTX), 'upstream_error');
  });

  t.test('a hostile service (negative id) is an upstream error', async () => {
    services(answers.clientsProducts([{ ...answers.service, id: '-1' }]));
    await rejectsWith(whmcs.backend().getCredentials(CUSTOMER, '1', CTX), 'upstream_error');
  });
});

t.test('WHMCS backend: invoices', async (t) => {
  let whmcs: FakeWhmcs;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
    whmcs.answer('GetClientsDetails', answers.clientDetailsFor);
  });
  t.afterEach(() => whmcs.close());

  t.test('listInvoices always filters by userid, newest first, and maps the recorded invoice', async () => {
    whmcs.answer('GetInvoices', answers.invoices);
    const page = await whmcs.backend().listInvoices(CUSTOMER, { page: 3, perPage: 10 }, CTX);
    assert.equal(page.total, 1);
    assert.deepEqual(page.items[0], {
      id: '1',
      number: '1',
      status: 'unpaid',
      issued_on: '2016-01-01',
      due_on: '2016-01-08',
      paid_at: null,
      subtotal: { amount: '15.95', currency: 'USD' },
      tax: { amount: '0.00', currency: 'USD' },
      credit: { amount: '0.00', currency: 'USD' },
      total: { amount: '15.95', currency: 'USD' },
    });
    InvoiceSchema.parse(page.items[0]);
    const sent = whmcs.requests('GetInvoices')[0];
    assert.deepEqual(
      ['userid', 'limitstart', 'limitnum', 'orderby', 'order'].map((name) => sent?.get(name)),
      ['1', '20', '10', 'id', 'desc'],
    );
    assert.equal(whmcs.requests('GetClientsDetails').length, 0, 'the invoice carries its currency');
  });

  t.test('no invoices: `invoices` is []', async () => {
    whmcs.answer('GetInvoices', answers.invoicesEmpty);
    assert.deepEqual(await whmcs.backend().listInvoices(CUSTOMER, { page: 1, perPage: 25 }, CTX), { items: [], total: 0 });
  });

  t.test('maps statuses, payment times, both tax levels, and falls back to the client currency', async () => {
    const recorded = answers.invoiceRow;
    const { currencycode: _dropped, ...withoutCurrency } = recorded;
    whmcs.answer('GetInvoices', {
      ...answers.invoices,
      totalresults: '3',
      invoices: {
        invoice: [
          { ...recorded, id: '3', status: 'Payment Pending', invoicenum: 'INV-3', tax: '1.10', tax2: '0.25' },
          { ...recorded, id: '2', status: 'Paid', datepaid: '2016-01-05 10:00:00' },
          { ...withoutCurrency, id: '1', status: 'Written Off' },
        ],
      },
    });
    const { items, total } = await whmcs.backend({ timeZone: 'Europe/Berlin' }).listInvoices(CUSTOMER, { page: 1, perPage: 25 }, CTX);
    assert.equal(total, 3);
    assert.equal(items[0]?.status, 'payment_pending');
    assert.equal(items[0]?.number, 'INV-3');
    assert.deepEqual(items[0]?.tax, { amount: '1.35', currency: 'USD' });
    assert.equal(items[1]?.paid_at, '2016-01-05T09:00:00Z');
    assert.equal(items[2]?.status, 'other');
    assert.equal(items[2]?.total.currency, 'USD');
    assert.equal(whmcs.requests('GetClientsDetails').length, 1);
  });

  t.test('getInvoiceDocument: the caller’s invoice with its items and customer block', async () => {
    whmcs.answer('GetInvoice', { ...answers.invoice, userid: 1 });
    const document = await whmcs.backend().getInvoiceDocument(CUSTOMER, '1', CTX);
    assert.deepEqual(document.items, [
      { description: 'Sample Monthly Product (01/01/2016 - 31/01/2016)', amount: { amount: '15.95', currency: 'USD' }, taxed: false },
    ]);
    // The recorded client states no address (the fields are absent): none is printed.
    assert.deepEqual(document.customer, { name: 'Test Client', company: null, email: 'test@example.com', address: [], tax_id: null });
    assert.deepEqual(document.balance, { amount: '15.95', currency: 'USD' });
    assert.equal(document.taxes[0]?.rate, '0.00', '"0.000" reads like 0 and "0.00"');
    assert.equal(document.due_on, '2020-12-30');
    assert.equal(whmcs.requests('GetInvoice')[0]?.get('invoiceid'), '1');
  });

  t.test('an invoice without tax2 and rates (issue 7): tax2 is 0.00 and no rate is stated', async () => {
    whmcs.answer('GetInvoice', variants.invoiceWithoutSecondTax);
    const document = await whmcs.backend().getInvoiceDocument(CUSTOMER, '1', CTX);
    assert.deepEqual(document.tax, { amount: '2.00', currency: 'USD' });
    assert.equal(document.taxes[0]?.rate, null);
    assert.deepEqual(document.items[0]?.taxed, true);
  });

  t.test('an invoice typed as its reference page types it (floats): the same decimals', async () => {
    whmcs.answer('GetInvoice', variants.invoiceAsNumbers);
    const document = await whmcs.backend().getInvoiceDocument(CUSTOMER, '1', CTX);
    assert.deepEqual(
      [document.subtotal.amount, document.tax.amount, document.total.amount, document.balance.amount, document.taxes[0]?.rate],
      ['10.00', '2.40', '12.40', '0.00', '19.00'],
    );
    assert.equal(document.paid_at, '2026-02-03T10:15:00Z');
  });

  t.test('items absent while the subtotal is not zero: the rows were lost, an upstream error', async () => {
    const { items: _lost, ...withoutItems } = answers.invoice;
    whmcs.answer('GetInvoice', { ...withoutItems, userid: 1 });
    const error = await rejectsWith(whmcs.backend().getInvoiceDocument(CUSTOMER, '1', CTX), 'upstream_error');
    assert.match(error.operatorMessage ?? '', /WHMCS GetInvoice answer .*items: absent or empty although the subtotal is 15\.95/);
  });

  t.test('an invoice without items (`items` absent, `transactions` "")', async () => {
    const { items: _none, ...withoutItems } = answers.invoice;
    const zero = { subtotal: '0.00', total: '0.00', balance: '0.00' };
    whmcs.answer('GetInvoice', { ...withoutItems, ...zero, userid: '1' });
    assert.deepEqual((await whmcs.backend().getInvoiceDocument(CUSTOMER, '1', CTX)).items, []);
  });

  t.test('another client’s invoice is not found: GetInvoice has no owner filter, the gateway checks', async () => {
    whmcs.answer('GetInvoice', answers.invoice);
    await rejectsWith(whmcs.backend().getInvoiceDocument(CUSTOMER, '1', CTX), 'not_found');
  });

  t.test('status "error" (Invoice ID Not Found) is not found', async () => {
    whmcs.answer('GetInvoice', answers.invoiceNotFound);
    await rejectsWith(whmcs.backend().getInvoiceDocument(CUSTOMER, '5', CTX), 'not_found');
  });
});

t.test('WHMCS backend: health', async (t) => {
  let whmcs: FakeWhmcs;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
  });
  t.afterEach(() => whmcs.close());

  t.test('ping is true when WHMCS answers, false on refusal or silence', async () => {
    whmcs.answer('GetCurrencies', answers.currencies, { times: 1 });
    const backend = whmcs.backend({ actionTimeoutsMs: { GetCurrencies: 30 } });
    assert.equal(await backend.ping(), true);
    whmcs.answer('GetCurrencies', answers.refusals.auth, { status: 403, times: 1 });
    assert.equal(await backend.ping(), false);
    whmcs.answer('GetCurrencies', answers.currencies, { delayMs: 300 });
    assert.equal(await backend.ping(), false);
    await backend.close();
  });

  t.test('declares how long a write operation may take', async () => {
    const backend = whmcs.backend();
    assert.equal(backend.name, 'whmcs');
    // Two rounds of reads, a 90 s module call, two rounds of reads after it, and the breaker's probe.
    assert.equal(backend.writeTimeoutMs, 4 * 15_000 + 90_000 + 5_000);
    assert.equal(whmcs.backend({ circuitBreaker: { enabled: false } }).writeTimeoutMs, 4 * 15_000 + 90_000);
  });
});
