/**
 * The WHMCS simulator over a real loopback port: auth, every action's shapes (quirks included),
 * AddOrder's silent fallbacks, and each injected fault.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { request } from 'undici';
import { IDEMPOTENCY_KEY_FIELD_NAME, SANDBOX_PUBLIC_PRODUCT_IDS } from '../../../simulators/whmcs/fixtures.js';
import { startWhmcsSimulator, type WhmcsSimulator, type WhmcsSimulatorOptions } from '../../../simulators/whmcs/server.js';

// Parse boundary: answers are asserted field by field, so the parsed JSON stays untyped.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface RawAnswer {
  status: number;
  contentType: string;
  text: string;
}

interface SendOptions {
  credentials?: boolean;
  headersTimeout?: number;
}

async function send(sim: WhmcsSimulator, fields: Record<string, string>, options: SendOptions = {}): Promise<RawAnswer> {
  const credentials: Record<string, string> = options.credentials === false ? {} : { identifier: sim.identifier, secret: sim.secret };
  const response = await request(sim.apiUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...credentials, ...fields }).toString(),
    ...(options.headersTimeout === undefined ? {} : { headersTimeout: options.headersTimeout }),
  });
  return { status: response.statusCode, contentType: String(response.headers['content-type']), text: await response.body.text() };
}

/** Calls an action with responsetype=json and parses the answer. */
async function call(sim: WhmcsSimulator, action: string, fields: Record<string, string> = {}, options: SendOptions = {}): Promise<{ status: number; body: Json }> {
  const answer = await send(sim, { action, responsetype: 'json', ...fields }, options);
  return { status: answer.status, body: JSON.parse(answer.text) };
}

/** `s:<bytes>:"…";`, as PHP serialize() writes a string. */
const phpString = (text: string): string => `s:${Buffer.byteLength(text)}:"${text}";`;
const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

async function withSimulator(options: WhmcsSimulatorOptions, run: (sim: WhmcsSimulator) => Promise<void>): Promise<void> {
  const sim = await startWhmcsSimulator(options);
  try {
    await run(sim);
  } finally {
    await sim.close();
  }
}

t.test('WHMCS simulator', async (t) => {
  t.test('startup and auth', async (t) => {
    t.test('listens on an ephemeral loopback port with random credentials', async () => {
      await withSimulator({}, async (sim) => {
        assert.match(sim.url, /^http:\/\/127\.0\.0\.1:\d+$/);
        assert.equal(sim.apiUrl, `${sim.url}/includes/api.php`);
        assert.match(sim.identifier, /^[0-9a-f]{32}$/);
        assert.match(sim.secret, /^[0-9a-f]{32}$/);
        const other = await startWhmcsSimulator();
        assert.notEqual(other.secret, sim.secret);
        await other.close();
      });
    });

    t.test('records every call unless told not to (the sandbox serves for as long as it runs)', async () => {
      await withSimulator({}, async (sim) => {
        await call(sim, 'GetProducts');
        await call(sim, 'GetClientsDetails', { clientid: '1' });
        assert.deepEqual(sim.calls.map((entry) => entry.action), ['getproducts', 'getclientsdetails']);
      });
      await withSimulator({ recordCalls: false }, async (sim) => {
        assert.equal((await call(sim, 'GetProducts')).body.result, 'success');
        assert.equal((await call(sim, 'GetClientsDetails', { clientid: '1' })).body.result, 'success');
        assert.deepEqual(sim.calls, []);
      });
    });

    t.test('answers 403 for missing or wrong credentials, and accepts username/password', async () => {
      await withSimulator({ identifier: 'id-1', secret: 'secret-1' }, async (sim) => {
        const missing = await call(sim, 'GetCurrencies', {}, { credentials: false });
        assert.equal(missing.status, 403);
        assert.deepEqual(missing.body, { result: 'error', message: 'Invalid or missing credentials' });

        const wrong = await call(sim, 'GetCurrencies', { identifier: 'id-1', secret: 'nope' }, { credentials: false });
        assert.equal(wrong.status, 403);
        assert.deepEqual(wrong.body, { result: 'error', message: 'Authentication Failed' });

        const legacyFields = await call(sim, 'GetCurrencies', { username: 'id-1', password: 'secret-1' }, { credentials: false });
        assert.equal(legacyFields.status, 200);
        assert.equal(legacyFields.body.result, 'success');
      });
    });

    t.test('bans the address after the configured number of failures, only when asked to', async () => {
      await withSimulator({ banAfterFailures: 3 }, async (sim) => {
        for (let attempt = 0; attempt < 3; attempt += 1) {
          const failed = await call(sim, 'GetCurrencies', { identifier: sim.identifier, secret: 'wrong' }, { credentials: false });
          assert.equal(failed.body.message, 'Authentication Failed');
        }
        const banned = await call(sim, 'GetCurrencies');
        assert.equal(banned.status, 403);
        assert.equal(banned.body.message, 'IP Banned');
      });
      await withSimulator({}, async (sim) => {
        for (let attempt = 0; attempt < 5; attempt += 1) {
          await call(sim, 'GetCurrencies', { identifier: 'x', secret: 'y' }, { credentials: false });
        }
        assert.equal((await call(sim, 'GetCurrencies')).status, 200);
      });
    });

    t.test('checks the access key, which skips the IP allow-list', async () => {
      await withSimulator({ accessKey: 'k3y!', allowedIps: ['203.0.113.9'] }, async (sim) => {
        const wrongKey = await call(sim, 'GetCurrencies', { accesskey: 'nope' });
        assert.equal(wrongKey.status, 403);
        assert.equal(wrongKey.body.message, 'Invalid Access Key');

        const noKey = await call(sim, 'GetCurrencies');
        assert.equal(noKey.status, 403);
        assert.equal(noKey.body.message, 'Invalid IP 127.0.0.1');

        assert.equal((await call(sim, 'GetCurrencies', { accesskey: 'k3y!' })).status, 200);
      });
    });

    t.test('enforces an API role', async () => {
      await withSimulator({ allowedActions: ['GetClientsDetails', 'getproducts'] }, async (sim) => {
        const denied = await call(sim, 'AddOrder', { clientid: '1' });
        assert.equal(denied.status, 403);
        assert.deepEqual(denied.body, { result: 'error', message: 'Invalid Permissions: API action "addorder" is not allowed' });
        assert.equal((await call(sim, 'GetProducts', { pid: '1' })).status, 200);
      });
    });
  });

  t.test('read actions on the seed data', async (t) => {
    let sim: WhmcsSimulator;
    t.before(async () => {
      sim = await startWhmcsSimulator();
    });
    t.teardown(async () => {
      await sim.close();
    });

    t.test('normalizes action names and knows the legacy aliases', async () => {
      assert.equal((await call(sim, 'get_Clients-DETAILS', { clientid: '1' })).body.result, 'success');
      assert.equal((await call(sim, 'GetClientsData', { clientid: '1' })).body.id, 1);
    });

    t.test('rejects an unknown action with HTTP 403, as its Authorization middleware does', async () => {
      const unknown = await call(sim, 'DoSomething');
      assert.equal(unknown.status, 403);
      assert.deepEqual(unknown.body, { result: 'error', message: 'Invalid API Action: "dosomething" is not a valid API action' });
    });

    t.test('encodes JSON like PHP flags 79 and answers NVP or XML without responsetype', async () => {
      const raw = await send(sim, { action: 'GetClientsProducts', clientid: '1', serviceid: '1', responsetype: 'json' });
      assert.equal(raw.contentType, 'application/json');
      assert.ok(raw.text.includes('"password":"Vq7\\u0026x\\u003C9\\u0027Lm\\u0022z"'), raw.text);
      assert.ok(raw.text.includes('"assignedips":"198.51.100.11\\n198.51.100.12"'));
      assert.equal(JSON.parse(raw.text).products.product[0].password, `Vq7&x<9'Lm"z`);

      const euro = await send(sim, { action: 'GetCurrencies', responsetype: 'json' });
      assert.ok(euro.text.includes('"prefix":"\\u20ac"'), euro.text);

      const nvp = await send(sim, { action: 'AddOrder', clientid: '1', paymentmethod: 'cash' });
      assert.equal(nvp.text, 'result=error;message=Invalid Payment Method. Valid options include banktransfer,paypal;');

      const xml = await send(sim, { action: 'GetProducts', pid: '1' });
      assert.match(xml.text, /^<\?xml version="1.0" encoding="utf-8"\?>\n<whmcsapi version="8.12.0">\n<action>getproducts<\/action>/);
      assert.match(xml.text, /<products><product><pid>1<\/pid>/);

      const unsupported = await call(sim, 'GetProducts', { responsetype: 'yaml' });
      assert.equal(unsupported.body.result, 'error');
      assert.match(unsupported.body.message, /^Unsupported API response type format/);
    });

    t.test('GetClientsDetails: top-level copy, client, stats; errors', async () => {
      const { body } = await call(sim, 'GetClientsDetails', { clientid: '1', stats: '1' });
      assert.equal(body.result, 'success');
      assert.equal(body.id, 1);
      assert.equal(body.companyname, 'Acme Hosting');
      assert.equal(body.client.client_id, 1);
      assert.equal(body.client.currency, 1);
      assert.equal(body.client.currency_code, 'USD');
      assert.equal(body.client.credit, '25.00');
      assert.equal(body.client.status, 'Active');
      assert.equal(body.client.users.user[0].is_owner, true);
      assert.deepEqual(body.stats, {
        numunpaidinvoices: 2,
        unpaidinvoicesamount: '$112.99 USD',
        incredit: true,
        creditbalance: '$25.00 USD',
        productsnumactive: 3,
        productsnumtotal: 9,
      });

      const beta = (await call(sim, 'GetClientsDetails', { clientid: '2' })).body;
      assert.equal(beta.client.currency_code, 'EUR');
      assert.equal(beta.stats, undefined);
      const closed = (await call(sim, 'GetClientsDetails', { email: 'dan@delta.example' })).body;
      assert.equal(closed.client.status, 'Closed');

      assert.deepEqual((await call(sim, 'GetClientsDetails', { clientid: '99' })).body, { result: 'error', message: 'Client Not Found' });
      assert.equal((await call(sim, 'GetClientsDetails')).body.message, 'Either clientid Or email Is Required');
    });

    t.test('GetProducts: all products including hidden ones, filters, products absent when empty', async () => {
      const all = (await call(sim, 'GetProducts')).body;
      assert.equal(all.totalresults, 7);
      assert.deepEqual(all.products.product.map((product: Json) => product.pid), [1, 2, 3, 4, 5, 6, 7]);
      assert.equal(all.startnumber, undefined);
      assert.deepEqual(SANDBOX_PUBLIC_PRODUCT_IDS, ['1', '2', '3', '4', '5']);

      const vpsS = (await call(sim, 'GetProducts', { pid: '1' })).body.products.product[0];
      assert.equal(vpsS.module, 'virtualizor');
      assert.equal(vpsS.paytype, 'recurring');
      assert.equal(vpsS.product_url, 'https://billing.example.com/store/vps/vps-s');
      assert.equal(vpsS.pricing.USD.monthly, '9.99');
      assert.equal(vpsS.pricing.USD.quarterly, '-1.00');
      assert.equal(vpsS.pricing.EUR.prefix, '€');
      assert.deepEqual(Object.keys(vpsS.pricing.USD).slice(0, 3), ['prefix', 'suffix', 'msetupfee']);
      assert.deepEqual(
        vpsS.customfields.customfield.map((field: Json) => [field.id, field.name]),
        [
          [1, 'SSH Key'],
          [2, IDEMPOTENCY_KEY_FIELD_NAME],
        ],
      );
      const [os, ips, backups] = vpsS.configoptions.configoption;
      assert.deepEqual([os.type, ips.type, backups.type], ['1', '4', '3']);
      assert.deepEqual([ips.minqty, ips.maxqty], [0, 4]);
      // The hidden choice is listed, without a flag.
      assert.deepEqual(os.options.option[0], {
        id: 10,
        name: 'CentOS 7 (end of life)',
        rawName: 'centos-7|CentOS 7 (end of life)',
        recurring: 0,
        required: 'centos-7',
        pricing: os.options.option[0].pricing,
      });

      const location = (await call(sim, 'GetProducts', { pid: '3' })).body.products.product[0].configoptions.configoption[1];
      assert.equal(location.type, '2');
      const listed = (await call(sim, 'GetProducts', { pid: '2,4' })).body;
      assert.deepEqual(listed.products.product.map((product: Json) => product.pid), [2, 4]);
      assert.equal(listed.products.product[1].name, 'Web Hosting Starter &amp; Mail');
      const byModule = (await call(sim, 'GetProducts', { module: 'solusvmpro' })).body;
      assert.deepEqual(byModule.products.product.map((product: Json) => product.pid), [3, 7]);
      const byGroup = (await call(sim, 'GetProducts', { gid: '3' })).body;
      assert.equal(byGroup.products.product[0].paytype, 'onetime');
      assert.equal(byGroup.products.product[0].module, '');

      assert.deepEqual((await call(sim, 'GetProducts', { pid: '999' })).body, { result: 'success', totalresults: 0 });
    });

    t.test('GetClientsProducts: scoped by clientid, ANDed filters, every client without clientid', async () => {
      const own = (await call(sim, 'GetClientsProducts', { clientid: '1' })).body;
      assert.equal(own.totalresults, '9');
      assert.equal(own.numreturned, 9);
      assert.deepEqual(
        own.products.product.map((service: Json) => [service.id, service.status]),
        [
          ['1', 'Active'],
          ['2', 'Suspended'],
          ['3', 'Pending'],
          ['4', 'Terminated'],
          ['5', 'Cancelled'],
          ['6', 'Fraud'],
          ['7', 'Completed'],
          ['8', 'Active'],
          ['9', 'Active'],
        ],
      );

      // The trap: no clientid, no scoping.
      const everyone = (await call(sim, 'GetClientsProducts')).body;
      assert.equal(everyone.totalresults, '24');
      assert.equal(everyone.clientid, null);
      assert.ok(everyone.products.product.some((service: Json) => service.clientid === '3'));

      const foreign = (await call(sim, 'GetClientsProducts', { clientid: '1', serviceid: '17' })).body;
      assert.deepEqual(foreign, {
        result: 'success',
        clientid: '1',
        serviceid: '17',
        pid: null,
        domain: null,
        totalresults: '0',
        startnumber: 0,
        numreturned: 0,
        products: '',
      });

      const page = (await call(sim, 'GetClientsProducts', { clientid: '2', limitstart: '2', limitnum: '3' })).body;
      assert.deepEqual([page.totalresults, page.startnumber, page.numreturned], ['7', 2, 3]);
      assert.deepEqual(page.products.product.map((service: Json) => service.id), ['12', '13', '14']);

      const vps = (await call(sim, 'GetClientsProducts', { clientid: '1', serviceid: '1' })).body.products.product[0];
      assert.equal(vps.serverip, '192.0.2.5');
      assert.equal(vps.dedicatedip, '198.51.100.10');
      assert.equal(vps.billingcycle, 'Monthly');
      assert.equal(vps.notes, 'Customer asked for reverse DNS; internal ticket #4411.');
      assert.deepEqual(vps.configoptions.configoption, [
        { id: '1', option: 'Operating System', type: 'dropdown', value: 'Debian 12' },
        { id: '2', option: 'Extra IPv4 Addresses', type: 'quantity', value: '2' },
        { id: '3', option: 'Daily Backups', type: 'yesno', value: '1' },
      ]);
      const free = (await call(sim, 'GetClientsProducts', { serviceid: '8' })).body.products.product[0];
      assert.deepEqual([free.billingcycle, free.nextduedate], ['Free Account', '0000-00-00']);
    });

    t.test('GetOrders: id and userid ANDed, newest first, orders absent when empty, custom statuses', async () => {
      const own = (await call(sim, 'GetOrders', { userid: '1' })).body;
      assert.equal(own.totalresults, 8);
      assert.deepEqual(
        own.orders.order.map((order: Json) => order.id),
        [8, 7, 6, 5, 4, 3, 2, 1],
      );
      const first = own.orders.order.find((order: Json) => order.id === 7);
      assert.equal(first.paymentstatus, 'Paid');
      assert.deepEqual(
        first.lineitems.lineitem.map((line: Json) => [line.relid, line.billingcycle, line.amount, line.producttype]),
        [
          [7, 'One Time', '$49.00 USD', 'Other Product/Service'],
          [8, 'Free Account', '$0.00 USD', 'Dedicated/VPS Server'],
        ],
      );

      assert.deepEqual((await call(sim, 'GetOrders', { id: '16', userid: '1' })).body, {
        result: 'success',
        totalresults: '0',
        startnumber: 0,
        numreturned: 0,
      });

      const review = (await call(sim, 'GetOrders', { userid: '2', status: 'In Review' })).body.orders.order;
      assert.deepEqual(
        review.map((order: Json) => [order.id, order.status]),
        [[11, 'In Review']],
      );
      const euro = (await call(sim, 'GetOrders', { id: '9' })).body.orders.order[0];
      assert.equal(euro.lineitems.lineitem[0].amount, '€8.99 EUR');

      const all = (await call(sim, 'GetOrders')).body;
      assert.deepEqual([all.totalresults, all.numreturned], [23, 23]);
      const page = (await call(sim, 'GetOrders', { limitstart: '20', limitnum: '5' })).body;
      assert.deepEqual(
        page.orders.order.map((order: Json) => order.id),
        [3, 2, 1],
      );
    });

    t.test('GetInvoices: scoped by userid, unfiltered without it, invoices [] when empty', async () => {
      const own = (await call(sim, 'GetInvoices', { userid: '1' })).body;
      assert.deepEqual([own.totalresults, own.startnumber, own.numreturned], [10, 0, 10]);
      // Default order: status DESC, then due date.
      assert.deepEqual(
        own.invoices.invoice.map((invoice: Json) => invoice.id),
        [10, 3, 4, 7, 1, 2, 8, 9, 5, 6],
      );
      const paid = own.invoices.invoice.find((invoice: Json) => invoice.id === 2);
      assert.deepEqual([paid.status, paid.subtotal, paid.credit, paid.total, paid.currencycode], ['Paid', '57.00', '25.00', '32.00', 'USD']);
      assert.notEqual(paid.datepaid, '0000-00-00 00:00:00');

      const everyone = (await call(sim, 'GetInvoices')).body;
      assert.deepEqual([everyone.totalresults, everyone.numreturned], [29, 25]);

      const refunded = (await call(sim, 'GetInvoices', { userid: '2', status: 'Refunded' })).body.invoices.invoice;
      assert.deepEqual(
        refunded.map((invoice: Json) => invoice.id),
        [15],
      );
      const overdue = (await call(sim, 'GetInvoices', { userid: '1', status: 'Overdue' })).body.invoices.invoice;
      assert.ok(overdue.some((invoice: Json) => invoice.id === 10));
      const byId = (await call(sim, 'GetInvoices', { userid: '3', orderby: 'id', order: 'desc', limitnum: '2' })).body.invoices.invoice;
      assert.deepEqual(
        byId.map((invoice: Json) => invoice.id),
        [28, 27],
      );

      assert.deepEqual((await call(sim, 'GetInvoices', { userid: '4', status: 'Paid' })).body, {
        result: 'success',
        totalresults: 0,
        startnumber: 0,
        numreturned: 0,
        invoices: [],
      });
    });

    t.test('GetInvoice: no owner filter, items absent when none, transactions "" when none, status:error quirk', async () => {
      const foreign = (await call(sim, 'GetInvoice', { invoiceid: '20' })).body;
      assert.equal(foreign.userid, 3);
      assert.equal(foreign.items.item[0].relid, 17);
      assert.equal(foreign.transactions.transaction[0].amountin, '9.99');
      assert.equal(foreign.balance, '0.00');

      const draft = (await call(sim, 'GetInvoice', { invoiceid: '9' })).body;
      assert.equal(draft.status, 'Draft');
      assert.equal('items' in draft, false);
      assert.equal(draft.transactions, '');

      const refunded = (await call(sim, 'GetInvoice', { invoiceid: '4' })).body;
      assert.equal(refunded.transactions.transaction.length, 2);

      const missing = await call(sim, 'GetInvoice', { invoiceid: '999' });
      assert.equal(missing.status, 200);
      assert.deepEqual(missing.body, { status: 'error', message: 'Invoice ID Not Found' });
    });

    t.test('GetCredits, GetPaymentMethods, GetCurrencies, WhmcsDetails', async () => {
      const credits = (await call(sim, 'GetCredits', { clientid: '1' })).body;
      assert.equal(credits.totalresults, 2);
      assert.equal(credits.clientid, '1');
      assert.deepEqual(
        credits.credits.credit.map((entry: Json) => entry.amount),
        ['50.00', '-25.00'],
      );
      assert.equal((await call(sim, 'GetCredits', { clientid: '99' })).body.message, 'Client ID Not Found');

      assert.deepEqual((await call(sim, 'GetPaymentMethods')).body, {
        result: 'success',
        totalresults: 2,
        paymentmethods: {
          paymentmethod: [
            { module: 'banktransfer', displayname: 'Bank Transfer' },
            { module: 'paypal', displayname: 'PayPal' },
          ],
        },
      });
      const currencies = (await call(sim, 'GetCurrencies')).body;
      assert.deepEqual(currencies.currencies.currency[0], { id: '1', code: 'USD', prefix: '$', suffix: ' USD', format: '1', rate: '1.00000' });
      assert.equal(currencies.currencies.currency[1].code, 'EUR');
      assert.deepEqual((await call(sim, 'WhmcsDetails')).body, {
        result: 'success',
        whmcs: { version: '8.12.0', canonicalversion: '8.12.0-release.1' },
      });
    });

    t.test('GetCancelledPackages: every client, paginated, packages [] past the end', async () => {
      const all = (await call(sim, 'GetCancelledPackages')).body;
      assert.deepEqual([all.totalresults, all.numreturned], ['3', 3]);
      assert.deepEqual(
        all.packages.package.map((row: Json) => [row.relid, row.type]),
        [
          ['9', 'End of Billing Period'],
          ['21', 'Immediate'],
          ['14', 'End of Billing Period'],
        ],
      );
      const beyond = (await call(sim, 'GetCancelledPackages', { limitstart: '10' })).body;
      assert.deepEqual(beyond, { result: 'success', totalresults: '3', startnumber: 10, numreturned: 0, packages: [] });
    });
  });

  t.test('AddOrder and AcceptOrder', async (t) => {
    let sim: WhmcsSimulator;
    t.beforeEach(async () => {
      sim = await startWhmcsSimulator();
    });
    t.afterEach(async () => {
      await sim.close();
    });

    const service = async (id: string): Promise<Json> => (await call(sim, 'GetClientsProducts', { serviceid: id })).body.products.product[0];

    t.test('creates a Pending order, Pending service and an invoice; credit pays it when it covers the total', async () => {
      const { body } = await call(sim, 'AddOrder', { clientid: '1', paymentmethod: 'banktransfer', pid: '1', billingcycle: 'monthly' });
      assert.deepEqual(body, { result: 'success', orderid: '24', serviceids: '25', productids: '25', addonids: '', domainids: '', invoiceid: '30' });

      const order = (await call(sim, 'GetOrders', { id: '24', userid: '1' })).body.orders.order[0];
      assert.deepEqual([order.status, order.amount, order.invoiceid, order.paymentstatus], ['Pending', '9.99', 30, 'Paid']);
      const created = await service('25');
      assert.deepEqual([created.status, created.billingcycle, created.recurringamount, created.dedicatedip], ['Pending', 'Monthly', '9.99', '']);

      const invoice = (await call(sim, 'GetInvoice', { invoiceid: '30' })).body;
      assert.deepEqual([invoice.status, invoice.subtotal, invoice.credit, invoice.total, invoice.balance], ['Paid', '9.99', '9.99', '0.00', '0.00']);
      assert.equal((await call(sim, 'GetClientsDetails', { clientid: '1' })).body.client.credit, '15.01');
      const ledger = (await call(sim, 'GetCredits', { clientid: '1' })).body.credits.credit.at(-1);
      assert.deepEqual([ledger.description, ledger.amount], ['Credit Applied to Invoice #30', '-9.99']);
    });

    t.test('applies credit partially, or not at all when auto-apply is off', async () => {
      const partial = (await call(sim, 'AddOrder', { clientid: '1', paymentmethod: 'paypal', pid: '3', billingcycle: 'monthly' })).body;
      const invoice = (await call(sim, 'GetInvoice', { invoiceid: partial.invoiceid })).body;
      // 39.99 + 10.00 setup + 2 GB minimum memory × 1.50.
      assert.deepEqual([invoice.status, invoice.subtotal, invoice.credit, invoice.total], ['Unpaid', '52.99', '25.00', '27.99']);
      assert.equal(sim.state.clients[0]?.credit, '0.00');

      sim.state.settings.autoApplyCredit = false;
      sim.state.clients[2]!.credit = '100.00';
      const untouched = (await call(sim, 'AddOrder', { clientid: '3', paymentmethod: 'paypal', pid: '1' })).body;
      assert.equal((await call(sim, 'GetInvoice', { invoiceid: untouched.invoiceid })).body.status, 'Unpaid');
    });

    t.test('omits invoiceid with noinvoice, and treats "false" as true like PHP', async () => {
      const { body } = await call(sim, 'AddOrder', { clientid: '2', paymentmethod: 'banktransfer', pid: '1', noinvoice: 'false' });
      assert.equal(body.result, 'success');
      assert.equal('invoiceid' in body, false);
      assert.equal(sim.state.orders.at(-1)?.invoiceId, 0);
    });

    t.test('falls back silently: disabled or unknown cycle → first enabled one', async () => {
      const hosting = (await call(sim, 'AddOrder', { clientid: '2', paymentmethod: 'paypal', pid: '4', billingcycle: 'monthly' })).body;
      const annual = await service(hosting.serviceids);
      assert.deepEqual([annual.billingcycle, annual.recurringamount], ['Annually', '45.00']);

      const vps = (await call(sim, 'AddOrder', { clientid: '2', paymentmethod: 'paypal', pid: '1', billingcycle: 'weekly' })).body;
      assert.equal((await service(vps.serviceids)).billingcycle, 'Monthly');
    });

    t.test('falls back silently on config options: first visible choice, clamped quantities, malformed input ignored', async () => {
      const options = base64('a:3:{i:1;i:999;i:2;i:99;i:3;s:1:"1";}');
      const { body } = await call(sim, 'AddOrder', { clientid: '2', paymentmethod: 'paypal', pid: '1', configoptions: options });
      const created = await service(body.serviceids);
      assert.deepEqual(
        created.configoptions.configoption.map((option: Json) => option.value),
        ['Debian 12', '4', '1'],
      );
      // 8.99 + 4 × 1.80 + 2.70 (EUR).
      assert.equal(created.recurringamount, '18.89');

      const memory = (await call(sim, 'AddOrder', { clientid: '2', paymentmethod: 'paypal', pid: '3', configoptions: base64('a:1:{i:5;i:0;}') })).body;
      assert.equal((await service(memory.serviceids)).configoptions.configoption[2].value, '2');

      for (const junk of ['!!not base64!!', base64('O:8:"stdClass":0:{}'), base64('a:1:{i:1;i:11;'), base64('{"1":12}')]) {
        const order = (await call(sim, 'AddOrder', { clientid: '2', paymentmethod: 'paypal', pid: '1', configoptions: junk })).body;
        assert.equal(order.result, 'success');
        assert.deepEqual(
          (await service(order.serviceids)).configoptions.configoption.map((option: Json) => option.value),
          ['Debian 12', '0', '0'],
        );
      }

      // Orders run as admin: a hidden choice is accepted.
      const hidden = (await call(sim, 'AddOrder', { clientid: '2', paymentmethod: 'paypal', pid: '1', configoptions: base64('a:1:{i:1;i:10;}') })).body;
      assert.equal((await service(hidden.serviceids)).configoptions.configoption[0].value, 'CentOS 7 (end of life)');
    });

    t.test('stores custom fields, hostname (HTML-encoded) and several pid[n] items', async () => {
      const key = 'idem-5f0c-ü';
      const { body } = await call(sim, 'AddOrder', {
        clientid: '2',
        paymentmethod: 'banktransfer',
        'pid[0]': '1',
        'billingcycle[0]': 'annually',
        'hostname[0]': 'a&b.example',
        'customfields[0]': base64(`a:2:{i:2;${phpString(key)}i:99;s:1:"x";}`),
        'pid[1]': '5',
        promocode: 'IGNORED',
        noemail: '1',
      });
      assert.equal(body.serviceids, '25,26');
      const vps = await service('25');
      assert.equal(vps.domain, 'a&amp;b.example');
      assert.equal(vps.billingcycle, 'Annually');
      assert.deepEqual(
        vps.customfields.customfield.map((field: Json) => [field.name, field.value]),
        [
          ['SSH Key', ''],
          [IDEMPOTENCY_KEY_FIELD_NAME, key],
        ],
      );
      const onetime = await service('26');
      assert.deepEqual([onetime.billingcycle, onetime.recurringamount, onetime.nextduedate], ['One Time', '0.00', '0000-00-00']);
      const invoice = (await call(sim, 'GetInvoice', { invoiceid: body.invoiceid })).body;
      assert.deepEqual(
        invoice.items.item.map((item: Json) => [item.relid, item.amount]),
        [
          [25, '89.00'],
          [26, '45.00'],
        ],
      );
      assert.deepEqual(sim.calls.find((entry) => entry.action === 'addorder')?.params.pid, { 0: '1', 1: '5' });
    });

    t.test('a free product gets no invoice (invoiceid "0"), as free services are not invoiced', async () => {
      const { body } = await call(sim, 'AddOrder', { clientid: '2', paymentmethod: 'paypal', pid: '6' });
      const free = await service(body.serviceids);
      assert.deepEqual([free.billingcycle, free.nextduedate, free.firstpaymentamount], ['Free Account', '0000-00-00', '0.00']);
      assert.equal(body.invoiceid, '0');
    });

    t.test('reports the documented errors', async () => {
      const error = async (fields: Record<string, string>): Promise<string> => (await call(sim, 'AddOrder', fields)).body.message;
      assert.equal(await error({ clientid: '99', paymentmethod: 'paypal', pid: '1' }), 'Client ID Not Found');
      assert.equal(await error({ clientid: '4', paymentmethod: 'paypal', pid: '1' }), 'Unable to add order when client status is Closed');
      assert.equal(await error({ clientid: '1', paymentmethod: 'mailin', pid: '1' }), 'Invalid Payment Method. Valid options include banktransfer,paypal');
      assert.equal(await error({ clientid: '1', paymentmethod: 'paypal', pid: '1', clientip: 'not-an-ip' }), "Invalid IP address provided for 'clientip'");
      assert.equal(await error({ clientid: '1', paymentmethod: 'paypal', 'pid[0]': '1', domain: 'x.example' }), "Expecting parameter 'domain' to be an array");
      assert.equal(await error({ clientid: '1', paymentmethod: 'paypal' }), 'No items added to cart so order cannot proceed');
      assert.equal(await error({ clientid: '1', paymentmethod: 'paypal', pid: '999' }), 'No items remain in the cart. Order cannot proceed.');
      assert.equal(sim.state.orders.length, 23);
    });

    t.test('AcceptOrder with autosetup activates the services; a non-Pending order is refused', async () => {
      const placed = (await call(sim, 'AddOrder', { clientid: '2', paymentmethod: 'paypal', pid: '1' })).body;
      assert.deepEqual((await call(sim, 'AcceptOrder', { orderid: placed.orderid, autosetup: '1' })).body, { result: 'success' });
      const active = await service(placed.serviceids);
      assert.equal(active.status, 'Active');
      assert.match(active.dedicatedip, /^198\.18\.\d+\.\d+$/);
      assert.equal((await call(sim, 'GetOrders', { id: placed.orderid })).body.orders.order[0].status, 'Active');

      const refusal = { result: 'error', message: 'Order ID not found or Status not Pending' };
      assert.deepEqual((await call(sim, 'AcceptOrder', { orderid: placed.orderid })).body, refusal);
      assert.deepEqual((await call(sim, 'AcceptOrder', { orderid: '11' })).body, refusal); // custom status "In Review"
      assert.deepEqual((await call(sim, 'AcceptOrder', { orderid: '999' })).body, refusal);
    });
  });

  t.test('service actions', async (t) => {
    let sim: WhmcsSimulator;
    t.beforeEach(async () => {
      sim = await startWhmcsSimulator();
    });
    t.afterEach(async () => {
      await sim.close();
    });

    const custom = async (serviceid: string, funcName: string): Promise<Json> =>
      (await call(sim, 'ModuleCustom', { serviceid, func_name: funcName })).body;
    const statusOf = (id: number): string | undefined => sim.state.services.find((row) => row.id === id)?.status;

    t.test('ModuleCustom runs the module function table and models service state', async () => {
      assert.deepEqual(await custom('1', 'stop'), { result: 'success' });
      assert.equal(sim.state.services[0]?.power, 'off');
      assert.deepEqual(await custom('1', 'START'), { result: 'success' });
      assert.deepEqual(await custom('1', 'reinstall'), { result: 'success' });
      assert.deepEqual(await custom('9', 'boot'), { result: 'success' });
      assert.deepEqual(await custom('9', 'reinstall'), { result: 'error', message: '!Function not found in module!' });
      assert.deepEqual(await custom('9', 'start'), { result: 'error', message: '!Function not found in module!' });
      assert.deepEqual(await custom('1', 'CreateAccount'), { result: 'error', message: '!Function not found in module!' });
      assert.deepEqual(await custom('7', 'start'), { result: 'error', message: 'Service not assigned to a module' });
      assert.equal((await custom('2', 'reboot')).message, 'Account is suspended');
      assert.equal((await custom('4', 'reboot')).message, 'Account not found on the server');
      assert.equal((await custom('3', 'boot')).message, 'Account not found on the server');
      assert.equal((await call(sim, 'ModuleCustom', { func_name: 'start' })).body.message, 'Service ID is required');
      assert.equal((await custom('999', 'start')).message, 'Service ID not found');
      assert.equal((await call(sim, 'ModuleCustom', { accountid: '1', func_name: 'reboot' })).body.result, 'success');
    });

    t.test('ModuleSuspend, ModuleUnsuspend and ModuleTerminate move the status, or refuse', async () => {
      assert.deepEqual((await call(sim, 'ModuleSuspend', { serviceid: '1', suspendreason: 'Abuse & spam' })).body, { result: 'success' });
      assert.equal(statusOf(1), 'Suspended');
      assert.equal(sim.state.services[0]?.suspensionreason, 'Abuse &amp; spam');
      assert.equal((await call(sim, 'ModuleSuspend', { serviceid: '1' })).body.message, 'Account is already suspended');
      assert.deepEqual((await call(sim, 'ModuleUnsuspend', { serviceid: '1' })).body, { result: 'success' });
      assert.equal(statusOf(1), 'Active');
      assert.equal((await call(sim, 'ModuleUnsuspend', { serviceid: '1' })).body.message, 'Account is not suspended');
      assert.deepEqual((await call(sim, 'ModuleTerminate', { serviceid: '2' })).body, { result: 'success' });
      assert.equal(statusOf(2), 'Terminated');
      assert.equal((await call(sim, 'ModuleTerminate', { serviceid: '2' })).body.message, 'Account not found on the server');
      assert.equal((await call(sim, 'ModuleSuspend', { serviceid: '6' })).body.message, 'Account not found on the server');
      assert.equal((await call(sim, 'ModuleSuspend', { serviceid: '7' })).body.message, 'Service not assigned to a module');
    });

    t.test('AddCancelRequest creates one request per service, with WHMCS defaults and errors', async () => {
      const created = (await call(sim, 'AddCancelRequest', { serviceid: '1', type: 'whenever', reason: 'A & B' })).body;
      assert.deepEqual(created, { result: 'success', serviceid: '1', userid: '1' });
      const row = sim.state.cancelRequests.at(-1);
      assert.deepEqual([row?.relid, row?.type, row?.reason], [1, 'End of Billing Period', 'A &amp; B']);

      assert.deepEqual((await call(sim, 'AddCancelRequest', { serviceid: '1' })).body, {
        result: 'error',
        message: 'Existing Cancellation Request Exists',
        serviceid: '1',
        userid: '1',
      });
      assert.equal((await call(sim, 'AddCancelRequest', { serviceid: '999' })).body.message, 'Service ID Not Found');

      await call(sim, 'AddCancelRequest', { serviceid: '10', type: 'Immediate' });
      const immediate = sim.state.cancelRequests.at(-1);
      assert.deepEqual([immediate?.type, immediate?.reason], ['Immediate', 'None Specified (API Submission)']);
    });

    t.test('GatewayDeleteCancelRequest removes a pending request only', async () => {
      assert.deepEqual((await call(sim, 'GatewayDeleteCancelRequest', { serviceid: '9' })).body, { result: 'success', serviceid: '9' });
      const gone = (await call(sim, 'GetCancelledPackages')).body.packages.package;
      assert.equal(
        gone.some((row: Json) => row.relid === '9'),
        false,
      );
      const notFound = { result: 'error', message: 'No Cancellation Request Found' };
      assert.deepEqual((await call(sim, 'GatewayDeleteCancelRequest', { serviceid: '9' })).body, notFound);
      assert.deepEqual((await call(sim, 'GatewayDeleteCancelRequest', { serviceid: '21' })).body, notFound); // already processed
      assert.deepEqual((await call(sim, 'GatewayDeleteCancelRequest', { serviceid: '999' })).body, notFound);
      assert.equal((await call(sim, 'AddCancelRequest', { serviceid: '9' })).body.result, 'success');
    });
  });

  t.test('faults', async (t) => {
    let sim: WhmcsSimulator;
    t.beforeEach(async () => {
      sim = await startWhmcsSimulator();
    });
    t.afterEach(async () => {
      await sim.close();
    });

    const order = { clientid: '2', paymentmethod: 'paypal', pid: '1' };
    const orderCount = (): number => sim.state.orders.length;

    t.test('latency delays matching calls; times limits it; other actions are unaffected', async () => {
      sim.inject({ action: 'GetProducts', kind: 'latency', ms: 150, times: 1 });
      const timed = async (action: string): Promise<number> => {
        const started = performance.now();
        await call(sim, action);
        return performance.now() - started;
      };
      // Bounds on either side of the injected 150 ms: what is checked is where the delay applies.
      assert.ok((await timed('GetCurrencies')) < 140);
      assert.ok((await timed('GetProducts')) >= 140);
      assert.ok((await timed('GetProducts')) < 140);
    });

    t.test('constructor latencyMs applies to every call', async () => {
      await withSimulator({ latencyMs: 80 }, async (slow) => {
        const started = performance.now();
        await call(slow, 'WhmcsDetails');
        assert.ok(performance.now() - started >= 75);
      });
    });

    t.test('http500, html and forbidden answer without performing the action', async () => {
      sim.inject({ action: 'addorder', kind: 'http500', times: 1 });
      const failed = await send(sim, { action: 'AddOrder', responsetype: 'json', ...order });
      assert.equal(failed.status, 500);
      assert.match(failed.contentType, /^text\/html/);

      sim.inject({ kind: 'html', times: 1 });
      const page = await send(sim, { action: 'AddOrder', responsetype: 'json', ...order });
      assert.equal(page.status, 200);
      assert.match(page.text, /^<!DOCTYPE html>/);

      sim.inject({ action: 'all', kind: 'forbidden', times: 1 });
      const denied = await call(sim, 'AddOrder', order);
      assert.equal(denied.status, 403);
      assert.deepEqual(denied.body, { result: 'error', message: 'Invalid IP 203.0.113.7' });
      sim.inject({ kind: 'forbidden', message: 'Invalid IP 2001:db8::1', times: 1 });
      assert.equal((await call(sim, 'GetProducts')).body.message, 'Invalid IP 2001:db8::1');

      assert.equal(orderCount(), 23);
      assert.equal(sim.calls.filter((entry) => entry.action === 'addorder').length, 3);
      assert.equal((await call(sim, 'AddOrder', order)).body.result, 'success');
    });

    t.test('malformed performs the action, then truncates the answer', async () => {
      sim.inject({ action: 'AddOrder', kind: 'malformed', times: 1 });
      const broken = await send(sim, { action: 'AddOrder', responsetype: 'json', ...order });
      assert.equal(broken.status, 200);
      assert.throws(() => JSON.parse(broken.text), SyntaxError);
      assert.equal(orderCount(), 24);
    });

    t.test('reset destroys the connection before anything happens', async () => {
      sim.inject({ action: 'AddOrder', kind: 'reset', times: 1 });
      await assert.rejects(call(sim, 'AddOrder', order));
      assert.equal(orderCount(), 23);
      assert.equal((await call(sim, 'AddOrder', order)).body.result, 'success');
    });

    t.test('stall_after_effect places the order, then answers too late for the caller', async () => {
      sim.inject({ action: 'AddOrder', kind: 'stall_after_effect', ms: 1_000, times: 1 });
      await assert.rejects(call(sim, 'AddOrder', order, { headersTimeout: 200 }), { code: 'UND_ERR_HEADERS_TIMEOUT' });
      assert.equal(orderCount(), 24);
      assert.equal(sim.calls.filter((entry) => entry.action === 'addorder').length, 1);
    });

    t.test('hang never answers, and close() still returns promptly', async () => {
      sim.inject({ kind: 'hang' });
      await assert.rejects(call(sim, 'GetProducts', {}, { headersTimeout: 150 }), { code: 'UND_ERR_HEADERS_TIMEOUT' });
      const pending = call(sim, 'GetProducts');
      const started = performance.now();
      await sim.close();
      await assert.rejects(pending);
      assert.ok(performance.now() - started < 1_000);
    });

    t.test('clearFaults removes every fault; bad fault parameters are refused', async () => {
      sim.inject({ kind: 'http500' });
      sim.clearFaults();
      assert.equal((await call(sim, 'GetCurrencies')).status, 200);
      assert.throws(() => sim.inject({ kind: 'latency', ms: -1 }), RangeError);
    });
  });

  t.test('seed', async (t) => {
    t.test('gives every instance its own data, and accepts a custom seed', async () => {
      await withSimulator({}, async (first) => {
        await withSimulator({}, async (second) => {
          await call(first, 'AddOrder', { clientid: '1', paymentmethod: 'paypal', pid: '1' });
          assert.equal(first.state.orders.length, 24);
          assert.equal(second.state.orders.length, 23);
        });
        await withSimulator({ seed: first.state }, async (copy) => {
          assert.equal(copy.state.orders.length, 24);
          assert.notEqual(copy.state, first.state);
        });
      });
    });
  });
});
