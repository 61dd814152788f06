/**
 * One scenario against every backend, over real ports: gateway → mapping → the backend's sandbox
 * upstream. Every endpoint answers its documented status with a body that is exactly its schema,
 * in both profiles; each account sees only its own records; an order is placed and read back; an
 * action runs; upstream faults become the contract's problems without a trace of upstream text.
 *
 * The scenario uses only v1 behaviour that holds for every backend. Where backends legitimately
 * differ, the difference is one field of the backend's entry in BACKEND_CASES.
 */
import assert from 'node:assert/strict';
import t, { type Test } from 'tap';
import { allEndpoints } from '../../src/app.js';
import type { SandboxFaultKind } from '../../src/backend/registry.js';
import { PROFILE_ACTIONS, type ServiceAction } from '../../src/v1/schemas.js';
import { FOSSBILLING_ACTIONS } from '../../mappings/fossbilling/service-actions.js';
import { buildBackendGateway, type BackendGateway } from '../helpers/backend-gateway.js';
import { ContractClient } from '../helpers/contract-client.js';
import { call, type HttpResponse } from '../helpers/http.js';

interface BackendCase {
  /** The registry name (mappings/index.ts). */
  name: string;
  /**
   * The service actions of each profile the backend carries out. Kept here until the Backend
   * interface declares them (`capabilities.serviceActions`); then read from the backend.
   */
  actions: { A: readonly ServiceAction[]; B: readonly ServiceAction[] };
  /** `scheduled`: cancel takes effect at the end of the period (202); `immediate`: at once (200). */
  cancel: 'scheduled' | 'immediate';
  /** Whether the credentials of a service carry its password. */
  returnsPassword: boolean;
  /** Its config section on top of the sandbox's for the fault suite: a short deadline, no breaker. */
  faultConfig: Record<string, unknown>;
}

const NO_BREAKER = { enabled: false, failureThreshold: 5, openMs: 10_000 };

const BACKEND_CASES: readonly BackendCase[] = [
  {
    name: 'whmcs',
    actions: PROFILE_ACTIONS,
    cancel: 'scheduled',
    returnsPassword: true,
    faultConfig: { timeoutMs: 1_000, circuitBreaker: NO_BREAKER },
  },
  {
    name: 'fossbilling',
    actions: FOSSBILLING_ACTIONS,
    cancel: 'immediate',
    returnsPassword: false,
    faultConfig: { timeoutMs: 1_000, circuitBreaker: NO_BREAKER },
  },
  {
    // Passthrough to a second gateway (the WHMCS sandbox behind it): what WHMCS does, forwarded.
    name: 'v1',
    actions: PROFILE_ACTIONS,
    cancel: 'scheduled',
    returnsPassword: true,
    faultConfig: { timeoutMs: 1_000 },
  },
];

let keyCounter = 0;
const freshKey = () => `backends-${process.pid}-${++keyCounter}`;

function expectProblem(response: HttpResponse, status: number, reason?: string): any {
  assert.equal(response.status, status, response.text);
  if (reason !== undefined) assert.equal(response.json().reason, reason, response.text);
  return response.json();
}

const ids = (response: HttpResponse): string[] => response.json().data.map((item: { id: string }) => item.id);

for (const backend of BACKEND_CASES) {
  for (const profile of ['A', 'B'] as const) {
    t.test(`${backend.name}, profile ${profile}`, async (t) => scenario(t, backend, profile));
  }
  t.test(`${backend.name}, upstream faults`, async (t) => faults(t, backend));
}

function scenario(t: Test, backend: BackendCase, profile: 'A' | 'B'): void {
  let gw: BackendGateway;
  let v1: ContractClient;
  let acme: string;
  let beta: string;
  t.before(async () => {
    gw = await buildBackendGateway(backend.name, { profile });
    v1 = new ContractClient(gw.base, allEndpoints({ profile }));
    acme = gw.keys['acme:all'] as string;
    beta = gw.keys['beta:all'] as string;
  });
  t.teardown(() => gw.close());

  const servicesOf = async (key: string) => ids(await v1.send('GET', '/v1/services?per_page=100', { key }));
  const act = (key: string, id: string, action: string) =>
    v1.send('POST', `/v1/services/${id}/actions`, { key, body: { action }, headers: { 'idempotency-key': freshKey() } });
  const serviceAs = async (key: string, id: string) => (await v1.send('GET', `/v1/services/${id}`, { key })).json();
  /** An active service of acme's with no cancellation pending: the one actions run on. */
  const activeService = async (): Promise<string> => {
    const list = (await v1.send('GET', '/v1/services?per_page=100', { key: acme })).json().data;
    const service = list.find((s: { status: string; cancellation_requested: boolean }) => s.status === 'active' && !s.cancellation_requested);
    assert.ok(service, 'acme has an active service');
    return service.id;
  };

  t.test('health, the OpenAPI document, and each key\'s own account', async () => {
    assert.deepEqual((await v1.send('GET', '/v1/health')).json(), { status: 'ok' });
    assert.equal((await v1.send('GET', '/v1/openapi.json')).status, 200);
    const mine = (await v1.send('GET', '/v1/me', { key: acme })).json();
    const theirs = (await v1.send('GET', '/v1/me', { key: beta })).json();
    assert.equal(mine.account.id, 'acme');
    assert.equal(theirs.account.id, 'beta');
    assert.notEqual(mine.account.email, theirs.account.email, 'two upstream customers');
  });

  t.test('products: the list, each product, and 404 for an unknown one', async () => {
    const list = await v1.send('GET', '/v1/products', { key: acme });
    assert.ok(ids(list).length > 0);
    for (const id of ids(list)) assert.equal((await v1.send('GET', `/v1/products/${id}`, { key: acme })).json().id, id);
    expectProblem(await v1.send('GET', '/v1/products/987654', { key: acme }), 404, 'not_found');
  });

  t.test('an order is placed, read back, replayed, and hidden from the other account', async () => {
    const currency = (await v1.send('GET', '/v1/me', { key: acme })).json().account.currency;
    const products = (await v1.send('GET', '/v1/products', { key: acme })).json().data;
    const product = products.find((p: any) => p.pay_type === 'recurring' && p.config_options.length === 0 && p.prices.some((x: any) => x.currency === currency));
    assert.ok(product, 'a recurring product without options in the account\'s currency');
    const price = product.prices.find((x: { currency: string }) => x.currency === currency);
    const body = { product_id: product.id, billing_cycle: price.billing_cycle, hostname: 'shop.example.com' };
    const headers = { 'idempotency-key': freshKey() };

    const placed = await v1.send('POST', '/v1/orders', { key: acme, body, headers });
    assert.equal(placed.status, 201, placed.text);
    const order = placed.json();
    assert.equal(placed.headers.location, `/v1/orders/${order.id}`);
    assert.equal((await v1.send('GET', `/v1/orders/${order.id}`, { key: acme })).json().id, order.id);
    const replay = await v1.send('POST', '/v1/orders', { key: acme, body, headers });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.text, placed.text);

    expectProblem(await v1.send('GET', `/v1/orders/${order.id}`, { key: beta }), 404, 'not_found');
    assert.ok(order.service_ids.length > 0, 'the order made a service');
    for (const serviceId of order.service_ids) {
      assert.equal((await serviceAs(acme, serviceId)).id, serviceId);
      expectProblem(await v1.send('GET', `/v1/services/${serviceId}`, { key: beta }), 404, 'not_found');
    }
  });

  t.test('services: each account lists only its own, pages add up', async () => {
    const mine = await servicesOf(acme);
    const theirs = await servicesOf(beta);
    assert.ok(mine.length > 1 && theirs.length > 0);
    assert.deepEqual(mine.filter((id) => theirs.includes(id)), [], 'no service in both lists');
    for (const id of mine) assert.equal((await serviceAs(acme, id)).id, id);
    const first = (await v1.send('GET', '/v1/services?per_page=1', { key: acme })).json();
    assert.equal(first.meta.total, mine.length);
    assert.equal(first.links.next, '/v1/services?page=2&per_page=1');
    const second = (await v1.send('GET', '/v1/services?page=2&per_page=1', { key: acme })).json();
    assert.notEqual(second.data[0].id, first.data[0].id);
  });

  t.test('every route with a service id answers 404 for another account\'s service, and changes nothing', async () => {
    const [theirs] = await servicesOf(beta);
    const [mine] = await servicesOf(acme);
    for (const [key, id] of [[acme, theirs], [beta, mine]] as Array<[string, string]>) {
      const owner = key === acme ? beta : acme;
      const before = await serviceAs(owner, id);
      expectProblem(await v1.send('GET', `/v1/services/${id}`, { key }), 404, 'not_found');
      expectProblem(await v1.send('GET', `/v1/services/${id}/credentials`, { key }), 404, 'not_found');
      for (const action of backend.actions[profile]) expectProblem(await act(key, id, action), 404, 'not_found');
      assert.deepEqual(await serviceAs(owner, id), before);
    }
  });

  t.test('credentials: the own service\'s, never cached', async () => {
    const id = await activeService();
    const response = await v1.send('GET', `/v1/services/${id}/credentials`, { key: acme });
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.equal(response.json().service_id, id);
    assert.equal(response.json().password !== null, backend.returnsPassword);
  });

  t.test(`actions: the profile ${profile} set this backend carries out, run and refused by state`, async () => {
    const id = await activeService();
    const refused = expectProblem(await act(acme, id, 'no_such_action'), 422, 'invalid_action');
    // The profile's actions, or (once backends declare them) those of this backend within it.
    for (const action of backend.actions[profile]) assert.ok(refused.allowed_actions.includes(action), action);
    for (const action of refused.allowed_actions) assert.ok((PROFILE_ACTIONS[profile] as readonly string[]).includes(action), action);
    // The served document offers exactly what the gateway accepts, and 202 only where cancel is scheduled.
    const document = (await call(gw.base, 'GET', '/v1/openapi.json')).json();
    assert.deepEqual(document.components.schemas.ActionInput.properties.action.enum, refused.allowed_actions);
    assert.match(document.info.description, new RegExp(`Service actions: ${refused.allowed_actions.join(', ')}\\.`));
    const scheduled = refused.allowed_actions.includes('cancel') && backend.cancel === 'scheduled';
    assert.equal('202' in document.paths['/v1/services/{id}/actions'].post.responses, scheduled, 'a 202 is documented only where cancel answers it');

    const before = await serviceAs(acme, id);
    for (const action of PROFILE_ACTIONS[profile].filter((a) => !backend.actions[profile].includes(a))) {
      expectProblem(await act(acme, id, action), 422);
    }
    assert.deepEqual(await serviceAs(acme, id), before, 'refused actions change nothing');

    if (profile === 'A') await cancelAndRevoke(id);
    else await suspendAndUnsuspend(id);
  });

  async function cancelAndRevoke(id: string): Promise<void> {
    const cancel = await act(acme, id, 'cancel');
    if (backend.cancel === 'scheduled') {
      assert.equal(cancel.status, 202, cancel.text);
      assert.equal(cancel.json().outcome, 'scheduled');
      assert.match(cancel.json().effective_on, /^\d{4}-\d{2}-\d{2}$/);
      assert.equal(cancel.json().service.cancellation_requested, true);
    } else {
      assert.equal(cancel.status, 200, cancel.text);
      assert.equal(cancel.json().outcome, 'completed');
      assert.equal(cancel.json().service.status, 'cancelled');
    }
    expectProblem(await act(acme, id, 'cancel'), 409, 'action_not_allowed');
    // A backend that cancels at once has nothing pending to revoke (FOSSBilling: see its service-actions.ts).
    if (!backend.actions.A.includes('cancel_revoke')) return;
    const revoke = await act(acme, id, 'cancel_revoke');
    assert.equal(revoke.status, 200, revoke.text);
    assert.equal(revoke.json().service.status, 'active');
    assert.equal(revoke.json().service.cancellation_requested, false);
    expectProblem(await act(acme, id, 'cancel_revoke'), 409, 'action_not_allowed');
  }

  async function suspendAndUnsuspend(id: string): Promise<void> {
    const suspend = await act(acme, id, 'suspend');
    assert.equal(suspend.status, 200, suspend.text);
    assert.equal(suspend.json().service.status, 'suspended');
    assert.equal((await serviceAs(acme, id)).status, 'suspended');
    expectProblem(await act(acme, id, 'suspend'), 409, 'action_not_allowed');
    const unsuspend = await act(acme, id, 'unsuspend');
    assert.equal(unsuspend.status, 200, unsuspend.text);
    assert.equal(unsuspend.json().service.status, 'active');
  }

  t.test('billing: balance, own invoices only, PDFs for the owner alone', async () => {
    const currency = (await v1.send('GET', '/v1/me', { key: acme })).json().account.currency;
    assert.equal((await v1.send('GET', '/v1/billing/balance', { key: acme })).json().credit.currency, currency);
    const mine = ids(await v1.send('GET', '/v1/billing/invoices?per_page=100', { key: acme }));
    const theirs = ids(await v1.send('GET', '/v1/billing/invoices?per_page=100', { key: beta }));
    assert.ok(mine.length > 0 && theirs.length > 0);
    assert.deepEqual(mine.filter((id) => theirs.includes(id)), [], 'no invoice in both lists');
    const pdf = await v1.send('GET', `/v1/billing/invoices/${mine[0]}/pdf`, { key: acme });
    assert.equal(pdf.status, 200);
    assert.equal(pdf.bytes.subarray(0, 5).toString(), '%PDF-');
    expectProblem(await v1.send('GET', `/v1/billing/invoices/${mine[0]}/pdf`, { key: beta }), 404, 'not_found');
    expectProblem(await v1.send('GET', `/v1/billing/invoices/${theirs[0]}/pdf`, { key: acme }), 404, 'not_found');
  });

  t.test('webhooks: set, read, per account, unset', async () => {
    const set = await v1.send('PUT', '/v1/webhooks', { key: acme, body: { url: 'https://hooks.example.com/e2e' } });
    assert.match(set.json().secret, /^whsec_/);
    assert.equal((await v1.send('GET', '/v1/webhooks', { key: acme })).json().url, 'https://hooks.example.com/e2e');
    assert.equal((await v1.send('GET', '/v1/webhooks', { key: beta })).json().url, null);
    await v1.send('PUT', '/v1/webhooks', { key: acme, body: { url: null } });
    assert.equal((await v1.send('GET', '/v1/webhooks', { key: acme })).json().url, null);
  });

  t.test('reached every endpoint with a documented success', async () => {
    assert.deepEqual(v1.notReached(), []);
  });
}

function faults(t: Test, backend: BackendCase): void {
  let gw: BackendGateway;
  let v1: ContractClient;
  let key: string;
  t.before(async () => {
    gw = await buildBackendGateway(backend.name, { profile: 'A', backendConfig: backend.faultConfig });
    v1 = new ContractClient(gw.base, allEndpoints({ profile: 'A' }));
    key = gw.keys['acme:all'] as string;
  });
  t.teardown(() => gw.close());

  const cases: Array<{ kind: SandboxFaultKind; statuses: number[]; reasons: string[] }> = [
    { kind: 'http500', statuses: [502], reasons: ['upstream_error'] },
    { kind: 'html', statuses: [502], reasons: ['upstream_error'] },
    { kind: 'hang', statuses: [504], reasons: ['upstream_timeout'] },
    // Cut on every attempt, the read's one retry included (a read with no answer started is sent
    // again; the v1 passthrough never retries): 502 once a request went out, 503 when cut before.
    { kind: 'reset', statuses: [502, 503], reasons: ['upstream_error', 'upstream_unavailable'] },
  ];
  for (const { kind, statuses, reasons } of cases) {
    t.test(`${kind} → ${statuses.join(' or ')}, nothing of the upstream's answer; the next call is served`, async () => {
      gw.upstream.faults.inject(kind);
      let response: HttpResponse;
      try {
        response = await v1.send('GET', '/v1/services', { key });
      } finally {
        gw.upstream.faults.clear();
      }
      assert.ok(statuses.includes(response.status), response.text);
      assert.ok(reasons.includes(response.json().reason), response.text);
      // The simulators' error pages: markup, and the words of their titles and texts.
      assert.doesNotMatch(response.text, /<[a-z!/]|DOCTYPE|Internal Server Error|Maintenance|upgrade/i);
      assert.equal((await v1.send('GET', '/v1/services', { key })).status, 200);
    });
  }

  t.test('the upstream down → 503 with Retry-After; health says so', async () => {
    await gw.stopUpstream();
    const response = await v1.send('GET', '/v1/me', { key });
    expectProblem(response, 503, 'upstream_unavailable');
    assert.ok(Number(response.headers['retry-after']) >= 1);
    expectProblem(await v1.send('GET', '/v1/health'), 503, 'upstream_unavailable');
  });
}
