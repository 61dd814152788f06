import assert from 'node:assert/strict';
import t from 'tap';
import type { OrderInput } from '../../../src/v1/schemas.js';
import { CUSTOMER, FakeWhmcs, rejectsWith } from './fake-whmcs.js';
import * as answers from './fixtures/answers.js';

const CTX = { requestId: 'req-order', idempotencyKey: 'key-1', idempotencyRecord: 'rec-1', beforeWrite: async () => undefined };
const decode = (base64: string | null | undefined): string => Buffer.from(base64 ?? '', 'base64').toString('utf8');

const ORDER: OrderInput = {
  product_id: '2',
  billing_cycle: 'annually',
  config_options: { '4': '12', '5': 21, '6': true, '8': 3 },
  hostname: 'vps7.example.net',
};

t.test('WHMCS backend: placing orders', async (t) => {
  let whmcs: FakeWhmcs;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
    whmcs
      .answer('GetProducts', answers.catalog)
      .answer('GetClientsDetails', answers.clientDetails)
      .answer('AddOrder', answers.addOrder)
      .answer('GetOrders', answers.orders);
  });
  t.afterEach(() => whmcs.close());

  t.test('sends AddOrder for the customer with PHP arrays, serialized options and the order key, then reads the order back', async () => {
    const order = await whmcs.backend().placeOrder(CUSTOMER, ORDER, CTX);
    assert.equal(order.id, '1');
    const sent = whmcs.requests('AddOrder');
    assert.equal(sent.length, 1);
    const params = sent[0];
    assert.ok(params);
    assert.equal(params.get('clientid'), '1');
    assert.equal(params.get('paymentmethod'), 'banktransfer');
    assert.equal(params.get('pid[0]'), '2');
    assert.equal(params.get('billingcycle[0]'), 'annually');
    assert.equal(decode(params.get('configoptions[0]')), 'a:4:{i:4;i:12;i:5;i:21;i:6;i:1;i:8;i:3;}');
    assert.equal(decode(params.get('customfields[0]')), 'a:1:{i:7;s:16:"acme:key-1:rec-1";}');
    assert.equal(params.has('hostname[0]'), false, 'WHMCS would prefix a hostname to the domain');
    assert.equal(params.get('domain[0]'), 'vps7.example.net');
    assert.equal(params.get('noemail'), '1');
    assert.equal(params.has('pid'), false, 'never the scalar form');
    assert.deepEqual(whmcs.actions().filter((action) => action === 'AcceptOrder'), [], 'AcceptOrder is off by default');
    const readBack = whmcs.requests('GetOrders')[0];
    assert.equal(readBack?.get('id'), '1');
    assert.equal(readBack?.get('userid'), '1');
  });

  t.test('one-time products are ordered with the onetime cycle and no options', async () => {
    await whmcs.backend({ orderKeyField: { ids: { '3': 9 } } }).placeOrder(CUSTOMER, { product_id: '3', billing_cycle: 'onetime' }, CTX);
    const params = whmcs.requests('AddOrder')[0];
    assert.equal(params?.get('billingcycle[0]'), 'onetime');
    assert.equal(params?.has('configoptions[0]'), false);
    assert.equal(decode(params?.get('customfields[0]')), 'a:1:{i:9;s:16:"acme:key-1:rec-1";}', 'the configured field id wins');
  });

  t.test('accepts the order when configured, with autosetup and no emails', async () => {
    whmcs.answer('AcceptOrder', answers.acceptOrder);
    await whmcs.backend({ acceptOrder: { enabled: true } }).placeOrder(CUSTOMER, ORDER, CTX);
    const params = whmcs.requests('AcceptOrder')[0];
    assert.equal(params?.get('orderid'), '1');
    assert.equal(params?.get('autosetup'), '1');
    assert.equal(params?.get('sendemail'), '0');
    assert.deepEqual(whmcs.actions().slice(-3, -1), ['AddOrder', 'AcceptOrder']);
  });

  t.test('an AcceptOrder failure is logged and the placed order still returned', async () => {
    whmcs.answer('AcceptOrder', answers.acceptOrderFailed);
    const order = await whmcs.backend({ acceptOrder: { enabled: true } }).placeOrder(CUSTOMER, ORDER, CTX);
    assert.equal(order.id, '1');
    const logged = whmcs.logs.find((line) => line.level === 'error');
    assert.match(logged?.msg ?? '', /AcceptOrder failed/);
  });

  const refusals: Array<[string, Partial<OrderInput>, RegExp]> = [
    ['a hidden product', { product_id: '9', billing_cycle: 'monthly', config_options: {} }, /^product_id/],
    ['an unknown product', { product_id: '77', config_options: {} }, /^product_id/],
    ['a disabled cycle ("-1.00")', { billing_cycle: 'quarterly' }, /^billing_cycle: "quarterly" is not offered/],
    ['a cycle of another pay type', { billing_cycle: 'onetime' }, /^billing_cycle/],
    ['an option of another product', { config_options: { '99': 1 } }, /^config_options\.99: product 2 has no such option/],
    ['a choice of another option', { config_options: { '4': '21' } }, /^config_options\.4: "21" is not a choice/],
    ['a boolean for a dropdown', { config_options: { '4': true } }, /^config_options\.4/],
    ['a quantity above the maximum', { config_options: { '8': 9 } }, /^config_options\.8: quantity must be between 1 and 8/],
    ['a quantity below the minimum', { config_options: { '8': 0 } }, /^config_options\.8: quantity must be between 1 and 8/],
    ['a quantity given as text', { config_options: { '8': '3' } }, /^config_options\.8: must be an integer/],
    ['a number for yes/no', { config_options: { '6': 1 } }, /^config_options\.6: must be true or false/],
  ];
  for (const [name, change, detail] of refusals) {
    t.test(`refuses ${name} before AddOrder`, async () => {
      const error = await rejectsWith(whmcs.backend().placeOrder(CUSTOMER, { ...ORDER, ...change }, CTX), 'validation');
      assert.match(error.detail, detail);
      assert.equal(whmcs.requests('AddOrder').length, 0);
    });
  }

  // WHMCS 8.7's getproducts.php lists a config option as id, name, type and options, without
  // minqty/maxqty (8.12 lists them): the catalog is read, a quantity for such an option is refused.
  t.test('a quantity option whose bounds WHMCS does not state: listed, the product orderable without it, never with a quantity', async (t) => {
    const unbounded = (option: Record<string, unknown>) => (Number(option.id) === 8 ? { id: option.id, name: option.name, type: option.type, options: option.options } : option);
    const vpsM = { ...answers.vpsM, configoptions: { configoption: answers.vpsM.configoptions.configoption.map(unbounded) } };
    const unstated = new FakeWhmcs()
      .answer('GetProducts', { ...answers.catalog, products: { product: [answers.vpsS, vpsM] } })
      .answer('GetClientsDetails', answers.clientDetails)
      .answer('AddOrder', answers.addOrder)
      .answer('GetOrders', answers.orders);
    t.teardown(() => unstated.close());
    const backend = unstated.backend();
    const listed = (await backend.getProduct('2', CTX)).config_options.find((option) => option.id === '8');
    assert.deepEqual([listed?.type, listed?.min_quantity, listed?.max_quantity], ['quantity', null, null]);
    const error = await rejectsWith(backend.placeOrder(CUSTOMER, ORDER, CTX), 'validation');
    assert.match(error.detail, /^config_options\.8: the billing system does not state this option's bounds/);
    assert.equal(unstated.requests('AddOrder').length, 0, 'nothing sent');
    const { '8': _quantity, ...others } = ORDER.config_options ?? {};
    assert.equal((await backend.placeOrder(CUSTOMER, { ...ORDER, config_options: others }, CTX)).id, '1');
  });

  t.test('refuses a product not sold in the customer’s currency', async () => {
    const euros = new FakeWhmcs();
    try {
      euros
        .answer('GetProducts', answers.catalog)
        .answer('GetClientsDetails', { ...answers.clientDetails, client: { ...answers.clientDetails.client, currency_code: 'EUR' } });
      const error = await rejectsWith(euros.backend().placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'monthly' }, CTX), 'validation');
      assert.match(error.detail, /not sold in the account's currency \(EUR\)/);
      const annual = await rejectsWith(euros.backend().placeOrder(CUSTOMER, { ...ORDER, config_options: {} }, CTX), 'validation');
      assert.match(annual.detail, /"annually" is not offered/, 'EUR has no annual price');
      assert.equal(euros.requests('AddOrder').length, 0);
    } finally {
      await euros.close();
    }
  });

  t.test('refuses a closed account before AddOrder', async () => {
    const closed = new FakeWhmcs();
    try {
      closed
        .answer('GetProducts', answers.catalog)
        .answer('GetClientsDetails', { ...answers.clientDetails, client: { ...answers.clientDetails.client, status: 'Closed' } });
      await rejectsWith(closed.backend().placeOrder(CUSTOMER, ORDER, CTX), 'validation');
      assert.equal(closed.requests('AddOrder').length, 0);
    } finally {
      await closed.close();
    }
  });

  t.test('will not order a product without the order-key field (its outcome could never be reconciled)', async () => {
    const error = await rejectsWith(whmcs.backend().placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'monthly' }, CTX), 'upstream_error');
    assert.match(error.operatorMessage ?? '', /no custom field "Gateway Idempotency Key"/);
    assert.equal(whmcs.requests('AddOrder').length, 0);
  });

  t.test('Invalid Payment Method is the operator’s misconfiguration', async () => {
    const misconfigured = new FakeWhmcs();
    try {
      misconfigured
        .answer('GetProducts', answers.catalog)
        .answer('GetClientsDetails', answers.clientDetails)
        .answer('AddOrder', answers.addOrderInvalidPayment);
      const error = await rejectsWith(misconfigured.backend({ paymentMethod: 'stripe' }).placeOrder(CUSTOMER, ORDER, CTX), 'upstream_error');
      assert.match(error.operatorMessage ?? '', /paymentMethod "stripe" is not an active WHMCS payment gateway/);
      assert.ok(!error.detail.includes('Invalid Payment Method'));
      assert.equal(error.outcomeUnknown, false);
    } finally {
      await misconfigured.close();
    }
  });

  t.test('Client ID Not Found from AddOrder is an upstream error naming the account', async () => {
    const unknown = new FakeWhmcs();
    try {
      unknown
        .answer('GetProducts', answers.catalog)
        .answer('GetClientsDetails', answers.clientDetails)
        .answer('AddOrder', { result: 'error', message: 'Client ID Not Found' });
      const error = await rejectsWith(unknown.backend().placeOrder(CUSTOMER, ORDER, CTX), 'upstream_error');
      assert.match(error.operatorMessage ?? '', /account acme maps to WHMCS client 1/);
    } finally {
      await unknown.close();
    }
  });

  t.test('the write-ahead runs right before AddOrder is sent; when it throws, nothing is sent', async () => {
    const steps: string[] = [];
    const order = whmcs.backend().placeOrder(CUSTOMER, ORDER, {
      ...CTX,
      beforeWrite: async () => {
        steps.push(`mark after ${whmcs.requests('GetClientsDetails').length} reads, ${whmcs.requests('AddOrder').length} AddOrder`);
      },
    });
    await order;
    assert.deepEqual(steps, ['mark after 1 reads, 0 AddOrder']);
    const refused = whmcs.backend().placeOrder(CUSTOMER, ORDER, { ...CTX, beforeWrite: () => Promise.reject(new Error('lease lost')) });
    await assert.rejects(refused, /lease lost/);
    assert.equal(whmcs.requests('AddOrder').length, 1, 'only the first order was sent');
  });

  t.test('an AddOrder timeout leaves the outcome unknown', async () => {
    const slow = new FakeWhmcs();
    try {
      slow
        .answer('GetProducts', answers.catalog)
        .answer('GetClientsDetails', answers.clientDetails)
        .answer('AddOrder', answers.addOrder, { delayMs: 300 });
      const error = await rejectsWith(slow.backend({ actionTimeoutsMs: { AddOrder: 30 } }).placeOrder(CUSTOMER, ORDER, CTX), 'timeout');
      assert.equal(error.outcomeUnknown, true);
      assert.equal(slow.requests('AddOrder').length, 1);
    } finally {
      await slow.close();
    }
  });

  t.test('a failure after AddOrder succeeded still says the order may exist', async () => {
    const broken = new FakeWhmcs();
    try {
      broken
        .answer('GetProducts', answers.catalog)
        .answer('GetClientsDetails', answers.clientDetails)
        .answer('AddOrder', answers.addOrder)
        .answer('GetOrders', '<html>Fatal error</html>');
      const error = await rejectsWith(broken.backend().placeOrder(CUSTOMER, ORDER, CTX), 'upstream_error');
      assert.equal(error.outcomeUnknown, true);
      assert.match(error.operatorMessage ?? '', /after AddOrder \(order 1\) had succeeded/);
    } finally {
      await broken.close();
    }
  });

  t.test('an unreadable AddOrder answer leaves the outcome unknown', async () => {
    const odd = new FakeWhmcs();
    try {
      odd
        .answer('GetProducts', answers.catalog)
        .answer('GetClientsDetails', answers.clientDetails)
        .answer('AddOrder', { result: 'success', orderid: 'abc' });
      const error = await rejectsWith(odd.backend().placeOrder(CUSTOMER, ORDER, CTX), 'upstream_error');
      assert.equal(error.outcomeUnknown, true);
    } finally {
      await odd.close();
    }
  });
});

t.test('WHMCS backend: finding an order by its idempotency key', async (t) => {
  const tagged = (tag: string, id = '7', orderid = '1') => ({
    ...answers.service,
    id,
    orderid,
    pid: '2',
    customfields: {
      customfield: [
        { id: '2', name: 'SSH Key', translated_name: 'SSH Key', value: '' },
        { id: '7', name: 'Gateway Idempotency Key', translated_name: 'Gateway Idempotency Key', value: tag },
      ],
    },
  });
  const KEY = { requestId: 'req-find', idempotencyKey: 'key-1', idempotencyRecord: 'rec-2' };
  const TAG = 'acme:key-1:rec-2';

  let whmcs: FakeWhmcs;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
    whmcs.answer('GetProducts', answers.catalog).answer('GetClientsDetails', answers.clientDetails).answer('GetOrders', answers.orders);
  });
  t.afterEach(() => whmcs.close());

  t.test('finds the service tagged with the key and record, and returns its order', async () => {
    whmcs.answer('GetClientsProducts', answers.clientsProducts([answers.service, tagged('beta:key-1:rec-2', '6'), tagged(TAG)]));
    const search = await whmcs.backend().findOrderByIdempotencyKey(CUSTOMER, KEY);
    assert.equal(search.kind === 'found' && search.order.id, '1');
    const scan = whmcs.requests('GetClientsProducts')[0];
    assert.equal(scan?.get('clientid'), '1');
    assert.equal(scan?.get('limitnum'), '100');
    assert.equal(whmcs.requests('GetOrders')[0]?.get('userid'), '1');
  });

  t.test('proves absence when every service shows the key field; accounts sharing the client and older uses of the key stay apart', async () => {
    whmcs.answer('GetClientsProducts', answers.clientsProducts([tagged('beta:key-1:rec-2'), tagged('acme:key-1:rec-1', '8'), tagged('acme:key-1', '9')]));
    const backend = whmcs.backend();
    assert.deepEqual(await backend.findOrderByIdempotencyKey(CUSTOMER, KEY), { kind: 'absent' });
    const sharingClient = { accountId: 'beta', upstreamId: '1' };
    assert.equal((await backend.findOrderByIdempotencyKey(sharingClient, KEY)).kind, 'found');
  });

  t.test('reads every page, past any page limit', async () => {
    const pages = 120;
    whmcs.answer('GetClientsProducts', (params) => {
      const start = Number(params.get('limitstart'));
      const rows = Array.from({ length: 100 }, (_, i) => ({ ...answers.service, id: String(start + i + 1) }));
      if (start === (pages - 1) * 100) rows[99] = tagged(TAG, String(start + 100));
      return answers.clientsProducts(rows, pages * 100);
    });
    const search = await whmcs.backend().findOrderByIdempotencyKey(CUSTOMER, KEY);
    assert.equal(search.kind, 'found');
    assert.equal(whmcs.requests('GetClientsProducts').length, pages);
  });

  t.test('cannot tell when the answer shows no custom fields for a service of a product with the key field', async () => {
    const { customfields: _hidden, ...bare } = tagged('');
    whmcs.answer('GetClientsProducts', answers.clientsProducts([answers.service, bare]));
    const search = await whmcs.backend().findOrderByIdempotencyKey(CUSTOMER, KEY);
    assert.equal(search.kind, 'unknown');
    assert.match(search.kind === 'unknown' ? search.reason : '', /does not show the custom field "Gateway Idempotency Key" of service 7/);
  });

  t.test('cannot tell when a page comes back short or the total changes during the search', async () => {
    whmcs.answer('GetClientsProducts', (params) =>
      params.get('limitstart') === '0' ? answers.clientsProducts([answers.service], 150) : answers.clientsProducts([], 150),
    );
    assert.equal((await whmcs.backend().findOrderByIdempotencyKey(CUSTOMER, KEY)).kind, 'unknown');
    whmcs.answer('GetClientsProducts', (params) =>
      answers.clientsProducts([{ ...answers.service, id: String(Number(params.get('limitstart')) + 1) }], params.get('limitstart') === '0' ? 150 : 151),
    );
    assert.equal((await whmcs.backend().findOrderByIdempotencyKey(CUSTOMER, KEY)).kind, 'unknown');
  });

  t.test('cannot tell when no product can carry the key', async () => {
    whmcs.answer('GetClientsProducts', answers.clientsProductsEmpty);
    const search = await whmcs.backend({ publicProductIds: ['1'] }).findOrderByIdempotencyKey(CUSTOMER, KEY);
    assert.match(search.kind === 'unknown' ? search.reason : '', /no public product has the custom field/);
  });

  t.test('a failing read cannot tell; it never answers absent', async () => {
    whmcs.answer('GetClientsProducts', '<html>busy</html>');
    const search = await whmcs.backend().findOrderByIdempotencyKey(CUSTOMER, KEY);
    assert.equal(search.kind, 'unknown');
  });
});
