/**
 * One contract whatever the backend: the same upstream situation, described to each mapping as its
 * upstream documents it (WHMCS: whmcs-api.md, the recorded answers; FOSSBilling: its source at
 * 56a0871, the fixtures citing it), gives the same v1 answer in shape and meaning.
 */
import assert from 'node:assert/strict';
import t, { type Test } from 'tap';
import { allEndpoints } from '../../src/app.js';
import { ServiceSchema } from '../../src/v1/schemas.js';
import { ORDER_STATUS as FOSS_ORDER_STATUS, SERVICE_STATUS as FOSS_SERVICE_STATUS } from '../../mappings/fossbilling/map.js';
import { backendWith, CTX as FOSS_CTX, CUSTOMER as FOSS_CUSTOMER, FakeCall, rejectsWith as fossRejects } from '../mappings/fossbilling/fake-call.js';
import * as foss from '../mappings/fossbilling/fixtures/answers.js';
import { CTX as WHMCS_CTX, CUSTOMER as WHMCS_CUSTOMER, FakeWhmcs, rejectsWith as whmcsRejects } from '../mappings/whmcs/fake-whmcs.js';
import * as whmcsAnswers from '../mappings/whmcs/fixtures/answers.js';
import { buildBackendGateway } from '../helpers/backend-gateway.js';
import { ContractClient } from '../helpers/contract-client.js';
import type { HttpResponse } from '../helpers/http.js';
import { eventually } from '../helpers/webhook-receiver.js';

/** WHMCS with client 1 owning one service (the recorded answer, changed by `service`). */
function whmcsWith(t: Test, service: Record<string, unknown>, cancellationPending: boolean): FakeWhmcs {
  const whmcs = new FakeWhmcs();
  t.teardown(() => whmcs.close());
  return whmcs
    .answer('GetClientsDetails', whmcsAnswers.clientDetails)
    .answer('GetProducts', whmcsAnswers.catalog)
    .answer('GetClientsProducts', whmcsAnswers.clientsProducts([{ ...whmcsAnswers.service, ...service }]))
    .answer('GetCancelledPackages', cancellationPending ? whmcsAnswers.cancelledPackages : whmcsAnswers.cancelledPackagesEmpty)
    .answer('AddCancelRequest', whmcsAnswers.addCancelRequest);
}

/** FOSSBilling with client 1 owning order 7 (the fixture, changed by `order`). */
function fossWith(order: Record<string, unknown>): FakeCall {
  return new FakeCall()
    .answer('client/get', foss.client)
    .answer('order/get', { ...foss.order, ...order })
    .answer('order/get_list', foss.page([{ ...foss.orderRow, ...order }]))
    .answer('order/cancel', true);
}

const cancellationOf = (service: { status: string; cancellation_requested: boolean; cancellation_effective_on: string | null }) => ({
  status: service.status,
  cancellation_requested: service.cancellation_requested,
  cancellation_effective_on: service.cancellation_effective_on,
});

t.test('a cancelled service has no cancellation pending, on every backend (contract §6: shown while a cancel is pending)', async (t) => {
  // WHMCS: the cron cancelled the service; its processed request stays in GetCancelledPackages (whmcs-api.md §cancel).
  const whmcs = whmcsWith(t, { status: 'Cancelled' }, true).backend();
  const onWhmcs = ServiceSchema.parse(await whmcs.getService(WHMCS_CUSTOMER, '1', WHMCS_CTX));
  // FOSSBilling: cancelFromOrder sets status canceled, canceled_at now, expires_at null (Order/Service.php).
  const cancelled = { status: 'canceled', canceled_at: '2026-03-01 12:00:00', expires_at: null };
  const fossbilling = backendWith(fossWith(cancelled));
  const onFoss = ServiceSchema.parse(await fossbilling.getService(FOSS_CUSTOMER, '7', FOSS_CTX));
  const [listed] = (await fossbilling.listServices(FOSS_CUSTOMER, { page: 1, perPage: 25 }, FOSS_CTX)).items;

  const expected = { status: 'cancelled', cancellation_requested: false, cancellation_effective_on: null };
  assert.deepEqual(cancellationOf(onWhmcs), expected, 'WHMCS');
  assert.deepEqual(cancellationOf(onFoss), expected, 'FOSSBilling, one service');
  assert.deepEqual(listed && cancellationOf(listed), expected, 'FOSSBilling, the list');
});

t.test('cancel while a cancellation is already pending: 409 action_not_allowed on every backend, nothing sent', async (t) => {
  const whmcs = whmcsWith(t, { status: 'Active' }, true);
  await whmcsRejects(whmcs.backend().runServiceAction(WHMCS_CUSTOMER, '1', 'cancel', WHMCS_CTX), 'conflict');
  assert.deepEqual(whmcs.requests('AddCancelRequest'), [], 'WHMCS: nothing written');

  // FOSSBilling 0.8.5+: a cancellation scheduled for the period's end (meta cancel_at_period_end), order still active.
  const fake = fossWith({ meta: { ...foss.order.meta, cancel_at_period_end: '1' } });
  const fossbilling = backendWith(fake);
  assert.equal((await fossbilling.getService(FOSS_CUSTOMER, '7', FOSS_CTX)).cancellation_requested, true, 'shown as pending');
  await fossRejects(fossbilling.runServiceAction(FOSS_CUSTOMER, '7', 'cancel', FOSS_CTX), 'conflict');
  assert.ok(!fake.methods().includes('order/cancel'), 'FOSSBilling: nothing written (it would cancel at once)');
});

t.test('each upstream\'s own order statuses map into the v1 vocabulary; `other` is for statuses the backend invented', async () => {
  // FOSSBilling's statuses (Model_ClientOrder STATUS_*, Order/Service.php counter): all documented, none invented.
  for (const status of ['pending_setup', 'failed_setup', 'failed_renew', 'active', 'suspended', 'canceled']) {
    assert.notEqual(FOSS_ORDER_STATUS[status], undefined, status);
    assert.notEqual(FOSS_ORDER_STATUS[status], 'other', `${status}: a documented status, not one the backend invented`);
    assert.notEqual(FOSS_SERVICE_STATUS[status], undefined, status);
  }
  // A setup that failed leaves the order unfulfilled with its service pending, as on WHMCS (order and service Pending).
  assert.equal(FOSS_ORDER_STATUS.failed_setup, 'pending');
  assert.equal(FOSS_SERVICE_STATUS.failed_setup, 'pending');
});

t.test('a failed setup reads the same as an order and as its service', async () => {
  const fossbilling = backendWith(fossWith({ status: 'failed_setup', activated_at: null }).answer('invoice/get_list', foss.page([])));
  const order = await fossbilling.getOrder(FOSS_CUSTOMER, '7', FOSS_CTX);
  const service = await fossbilling.getService(FOSS_CUSTOMER, '7', FOSS_CTX);
  assert.equal(order.status, 'pending');
  assert.equal(service.status, 'pending');
});

t.test('a hosting service ordered in the panel itself shows its domain as hostname, on every backend', async (t) => {
  // WHMCS: the service's `domain` (GetClientsProducts), however it was ordered.
  const whmcs = whmcsWith(t, { domain: 'shop.example.com' }, false).backend();
  assert.equal((await whmcs.getService(WHMCS_CUSTOMER, '1', WHMCS_CTX)).hostname, 'shop.example.com');
  // FOSSBilling's checkout stores the domain as config.domain (Servicehosting/Service.php _getDomainTuple:
  // owndomain_sld + owndomain_tld, a dot put before a tld that has none; register_* and transfer_* as given).
  const domains: Array<[Record<string, string>, string]> = [
    [{ action: 'owndomain', owndomain_sld: 'shop', owndomain_tld: '.example.com' }, 'shop.example.com'],
    [{ action: 'owndomain', owndomain_sld: 'shop', owndomain_tld: 'com' }, 'shop.com'],
    [{ action: 'register', register_sld: 'newshop', register_tld: '.com' }, 'newshop.com'],
    [{ action: 'transfer', transfer_sld: 'oldshop', transfer_tld: '.net' }, 'oldshop.net'],
  ];
  for (const [domain, hostname] of domains) {
    const fossbilling = backendWith(fossWith({ config: { domain } }));
    assert.equal((await fossbilling.getService(FOSS_CUSTOMER, '7', FOSS_CTX)).hostname, hostname, domain.action);
    const [listed] = (await fossbilling.listServices(FOSS_CUSTOMER, { page: 1, perPage: 25 }, FOSS_CTX)).items;
    assert.equal(listed?.hostname, hostname, `${domain.action}, listed`);
  }
  // Nothing usable: no hostname, never a half name.
  for (const domain of [{ action: 'owndomain', owndomain_sld: 'shop' }, { action: 'register', register_sld: '', register_tld: '.com' }, 'example.com']) {
    const fossbilling = backendWith(fossWith({ config: { domain } }));
    assert.equal((await fossbilling.getService(FOSS_CUSTOMER, '7', FOSS_CTX)).hostname, null, JSON.stringify(domain));
  }
});

// ---- the same requests on every backend, end to end (each backend's sandbox upstream) ----------

let keyCounter = 0;
const freshKey = () => `samecontract-${process.pid}-${++keyCounter}`;

for (const name of ['whmcs', 'fossbilling', 'v1']) {
  t.test(`${name}: the same refusals, pages and cancellation shape as every other backend`, async (t) => {
    const gw = await buildBackendGateway(name, { profile: 'A' });
    t.teardown(() => gw.close());
    const v1 = new ContractClient(gw.base, allEndpoints({ profile: 'A' }));
    const key = gw.keys['acme:all'] as string;
    const order = (body: object) => v1.send('POST', '/v1/orders', { key, body, headers: { 'idempotency-key': freshKey() } });
    const problem = (response: HttpResponse) => {
      const { status, reason, errors } = response.json();
      return { status, reason, pointers: (errors ?? []).map((error: { pointer: string }) => error.pointer) };
    };

    const products = (await v1.send('GET', '/v1/products', { key })).json().data;
    const currency = (await v1.send('GET', '/v1/me', { key })).json().account.currency;
    const product = products.find((p: any) => p.pay_type === 'recurring' && p.config_options.length === 0 && p.prices.some((x: any) => x.currency === currency));
    assert.ok(product, 'a recurring product without options');
    const offered = new Set(product.prices.map((price: { billing_cycle: string }) => price.billing_cycle));
    const notOffered = ['monthly', 'quarterly', 'semiannually', 'annually', 'biennially', 'triennially', 'onetime', 'free'].find((cycle) => !offered.has(cycle));
    const base = { product_id: product.id, billing_cycle: [...offered][0], hostname: 'same.example.com' };

    assert.deepEqual(problem(await order({ ...base, product_id: '987654' })), { status: 422, reason: 'validation_failed', pointers: ['/product_id'] }, 'unknown product');
    assert.deepEqual(problem(await order({ ...base, billing_cycle: notOffered })), { status: 422, reason: 'validation_failed', pointers: ['/billing_cycle'] }, 'a cycle the product does not offer');
    assert.deepEqual(problem(await order({ ...base, config_options: { '987654': 1 } })), { status: 422, reason: 'validation_failed', pointers: ['/config_options/987654'] }, 'an option the product does not have');
    for (const path of ['/v1/orders/987654', '/v1/services/987654', '/v1/services/987654/credentials', '/v1/billing/invoices/987654/pdf', '/v1/products/987654']) {
      assert.deepEqual(problem(await v1.send('GET', path, { key })), { status: 404, reason: 'not_found', pointers: [] }, path);
    }

    for (const list of ['/v1/services', '/v1/billing/invoices']) {
      const first = (await v1.send('GET', `${list}?per_page=1`, { key })).json();
      const past = await v1.send('GET', `${list}?page=${first.meta.total + 5}&per_page=1`, { key });
      assert.equal(past.status, 200, `${list}: a page past the end is a page`);
      assert.deepEqual(past.json().data, [], list);
      assert.equal(past.json().meta.total, first.meta.total, `${list}: the same total`);
      assert.equal(past.json().meta.last_page, first.meta.total, list);
    }

    const placed = await order(base);
    assert.equal(placed.status, 201, placed.text);
    const [serviceId] = placed.json().service_ids;
    const serviceNow = async () => (await v1.send('GET', `/v1/services/${serviceId}`, { key })).json();
    await eventually(async () => (await serviceNow()).status === 'active', 'the new service active');
    const cancel = await v1.send('POST', `/v1/services/${serviceId}/actions`, { key, body: { action: 'cancel' }, headers: { 'idempotency-key': freshKey() } });
    assert.ok([200, 202].includes(cancel.status), cancel.text);
    const after = await serviceNow();
    if (cancel.status === 202) {
      // Scheduled: pending until the period's end, and it says when.
      assert.deepEqual(cancellationOf(after), { status: 'active', cancellation_requested: true, cancellation_effective_on: cancel.json().effective_on });
    } else {
      // Done at once: nothing is pending any more.
      assert.deepEqual(cancellationOf(after), { status: 'cancelled', cancellation_requested: false, cancellation_effective_on: null });
    }
    assert.deepEqual(cancellationOf(cancel.json().service), cancellationOf(after), 'the action\'s service is the service as it now stands');
    const again = await v1.send('POST', `/v1/services/${serviceId}/actions`, { key, body: { action: 'cancel' }, headers: { 'idempotency-key': freshKey() } });
    assert.deepEqual(problem(again), { status: 409, reason: 'action_not_allowed', pointers: [] }, 'cancelling twice');
  });
}
