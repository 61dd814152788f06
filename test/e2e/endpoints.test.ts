/**
 * Every endpoint end to end over a real port: gateway → WHMCS mapping → simulator, in both profiles.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildTestGateway, type TestGateway } from '../helpers/gateway.js';
import { call, type HttpResponse } from '../helpers/http.js';

function expectProblem(response: HttpResponse, status: number, reason: string): any {
  assert.equal(response.status, status, response.text);
  assert.match(response.headers['content-type'] ?? '', /^application\/problem\+json/);
  assert.equal(response.json().reason, reason);
  assert.ok(response.headers['x-request-id']);
  return response.json();
}

let keyCounter = 0;
const freshKey = () => `e2e-${process.pid}-${++keyCounter}`;

t.test('end to end, profile A', async (t) => {
  let gw: TestGateway;
  let base: string;
  let key: string;
  t.before(async () => {
    gw = await buildTestGateway({ profile: 'A' });
    base = await gw.app.listen({ host: '127.0.0.1', port: 0 });
    key = gw.keys['acme:all'] as string;
  });
  t.teardown(() => gw.close());

  t.test('GET /v1/health → ok, without a key', async () => {
    const response = await call(base, 'GET', '/v1/health');
    assert.equal(response.status, 200);
    assert.deepEqual(response.json(), { status: 'ok' });
    assert.ok(response.headers['x-request-id']);
  });

  t.test('GET /v1/me → the account and the key, no upstream ids', async () => {
    const response = await call(base, 'GET', '/v1/me', { key });
    assert.equal(response.status, 200);
    const body = response.json();
    assert.equal(body.account.id, 'acme');
    assert.equal(body.account.company, 'Acme Hosting');
    assert.equal(body.account.name, 'Alice Archer');
    assert.equal(body.account.currency, 'USD');
    assert.equal(body.account.status, 'active');
    assert.equal(body.key.id, gw.keyIds['acme:all']);
    assert.equal(body.key.rate_limits.account_per_minute, 100_000);
    assert.ok(!response.text.includes('uuid'), 'no upstream fields');
  });

  t.test('GET /v1/products → public products only, money as strings', async () => {
    const response = await call(base, 'GET', '/v1/products', { key });
    assert.equal(response.status, 200);
    const ids = response.json().data.map((p: { id: string }) => p.id);
    assert.deepEqual(ids.sort(), ['1', '2', '3', '4', '5']);
    for (const product of response.json().data) {
      for (const price of product.prices) {
        assert.match(price.price, /^\d+\.\d{2}$/);
        assert.match(price.currency, /^[A-Z]{3}$/);
      }
    }
  });

  t.test('GET /v1/products/{id} → options; hidden and unknown products are 404', async () => {
    const response = await call(base, 'GET', '/v1/products/1', { key });
    assert.equal(response.status, 200);
    const os = response.json().config_options.find((o: { type: string }) => o.type === 'dropdown');
    assert.ok(os, 'has a dropdown option');
    expectProblem(await call(base, 'GET', '/v1/products/6', { key }), 404, 'not_found');
    expectProblem(await call(base, 'GET', '/v1/products/999', { key }), 404, 'not_found');
    expectProblem(await call(base, 'GET', '/v1/products/abc', { key }), 400, 'invalid_request');
  });

  t.test('POST /v1/orders → 201 with Location; the order reads back; a replay is identical', async () => {
    const idem = freshKey();
    const body = { product_id: '1', billing_cycle: 'monthly', config_options: { '1': '11' }, hostname: 'vps7.example.com' };
    const placed = await call(base, 'POST', '/v1/orders', { key, body, headers: { 'idempotency-key': idem } });
    assert.equal(placed.status, 201, placed.text);
    const order = placed.json();
    assert.equal(placed.headers.location, `/v1/orders/${order.id}`);
    assert.equal(order.status, 'pending');
    assert.equal(order.service_ids.length, 1);
    const read = await call(base, 'GET', placed.headers.location as string, { key });
    assert.equal(read.status, 200);
    assert.equal(read.json().id, order.id);

    const before = gw.simulator.state.orders.length;
    const replay = await call(base, 'POST', '/v1/orders', { key, body: { ...body }, headers: { 'idempotency-key': idem } });
    assert.equal(replay.status, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.text, placed.text);
    assert.equal(replay.headers.location, placed.headers.location);
    assert.notEqual(replay.headers['x-request-id'], placed.headers['x-request-id']);
    assert.equal(gw.simulator.state.orders.length, before, 'no second order');

    const conflict = await call(base, 'POST', '/v1/orders', { key, body: { ...body, billing_cycle: 'annually' }, headers: { 'idempotency-key': idem } });
    expectProblem(conflict, 409, 'idempotency_conflict');
  });

  t.test('POST /v1/orders refuses what WHMCS would silently replace, placing nothing', async () => {
    const before = gw.simulator.state.orders.length;
    // Each points at the field it refuses (contract §2), as the request's own validation does.
    const cases: Array<[unknown, string, string]> = [
      [{ product_id: '4', billing_cycle: 'monthly' }, 'disabled billing cycle', '/billing_cycle'],
      [{ product_id: '6', billing_cycle: 'monthly' }, 'hidden product', '/product_id'],
      [{ product_id: '999', billing_cycle: 'monthly' }, 'unknown product', '/product_id'],
      [{ product_id: '1', billing_cycle: 'monthly', config_options: { '1': '41' } }, 'choice of another option', '/config_options/1'],
      [{ product_id: '1', billing_cycle: 'monthly', config_options: { '4': '41' } }, 'option of another product', '/config_options/4'],
      [{ product_id: '1', billing_cycle: 'monthly', config_options: { '2': 99 } }, 'quantity out of range', '/config_options/2'],
    ];
    for (const [body, label, pointer] of cases) {
      const response = await call(base, 'POST', '/v1/orders', { key, body, headers: { 'idempotency-key': freshKey() } });
      expectProblem(response, 422, 'validation_failed');
      const problem = response.json();
      assert.ok(problem.detail.length > 0, label);
      assert.equal(problem.errors?.length, 1, label);
      assert.equal(problem.errors[0].pointer, pointer, label);
      assert.ok(problem.detail.endsWith(problem.errors[0].detail), `${label}: the pointer's detail is the field's part of the detail`);
    }
    assert.equal(gw.simulator.state.orders.length, before);
    assert.ok(!gw.simulator.calls.some((c) => c.action === 'addorder' && String(c.params.pid) === '4'));
  });

  t.test('GET /v1/orders/{id} → own orders with mapped statuses', async () => {
    const response = await call(base, 'GET', '/v1/orders/1', { key });
    assert.equal(response.status, 200);
    assert.equal(response.json().status, 'active');
    assert.match(response.json().total.amount, /^\d+\.\d{2}$/);
    const custom = await call(base, 'GET', '/v1/orders/11', { key: gw.keys['beta:all'] });
    assert.equal(custom.json().status, 'other', 'a custom WHMCS status');
  });

  t.test('GET /v1/services → pages with meta, links and a Link header', async () => {
    const first = await call(base, 'GET', '/v1/services?per_page=4', { key });
    assert.equal(first.status, 200);
    const body = first.json();
    assert.equal(body.data.length, 4);
    assert.deepEqual(body.meta, { page: 1, per_page: 4, total: body.meta.total, last_page: Math.ceil(body.meta.total / 4) });
    assert.ok(body.meta.total >= 9);
    assert.equal(body.links.prev, null);
    assert.equal(body.links.next, '/v1/services?page=2&per_page=4');
    assert.match(first.headers.link ?? '', /<\/v1\/services\?page=2&per_page=4>; rel="next"/);
    const second = await call(base, 'GET', '/v1/services?page=2&per_page=4', { key });
    const overlap = second.json().data.filter((s: { id: string }) => body.data.some((f: { id: string }) => f.id === s.id));
    assert.equal(overlap.length, 0, 'pages do not overlap');
    const beyond = await call(base, 'GET', '/v1/services?page=99&per_page=4', { key });
    assert.deepEqual(beyond.json().data, []);
  });

  t.test('GET /v1/services/{id} → no password, notes or node addresses', async () => {
    const response = await call(base, 'GET', '/v1/services/1', { key });
    assert.equal(response.status, 200);
    const service = response.json();
    assert.equal(service.status, 'active');
    for (const leak of ['password', 'notes', 'serverip', 'serverhostname', 'subscriptionid']) assert.ok(!(leak in service), leak);
    assert.ok(!response.text.includes(gw.simulator.state.services[0]!.password), 'the password is not there');
    const pending = await call(base, 'GET', '/v1/services/9', { key });
    assert.equal(pending.json().cancellation_requested, true);
    assert.match(pending.json().cancellation_effective_on, /^\d{4}-\d{2}-\d{2}$/);
  });

  t.test('GET /v1/services/{id}/credentials → the secret, no-store, audited before it leaves', async () => {
    const response = await call(base, 'GET', '/v1/services/1/credentials', { key });
    assert.equal(response.status, 200);
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.equal(response.json().password, gw.simulator.state.services[0]!.password);
    const record = gw.audit.records.at(-1);
    assert.equal(record?.request_id, response.headers['x-request-id']);
    assert.equal(record?.outcome, 'returned');
    assert.equal(record?.key_id, gw.keyIds['acme:all']);
    assert.equal(record?.service_id, '1');
    assert.ok(!JSON.stringify(gw.audit.records).includes(gw.simulator.state.services[0]!.password));
    assert.ok(record?.fields.includes('password'));

    // A HEAD is audited too, with no field named: nothing of the record was sent.
    const head = await call(base, 'HEAD', '/v1/services/1/credentials', { key });
    assert.equal(head.status, 200);
    assert.equal(head.bytes.length, 0);
    assert.equal(gw.audit.records.at(-1)?.request_id, head.headers['x-request-id']);
    assert.deepEqual(gw.audit.records.at(-1)?.fields, []);

    const missing = await call(base, 'GET', '/v1/services/17/credentials', { key });
    expectProblem(missing, 404, 'not_found');
    assert.equal(gw.audit.records.at(-1)?.outcome, 'not_found');

    // A key pasted where the id belongs is refused, and recorded without the key.
    expectProblem(await call(base, 'GET', `/v1/services/${key}/credentials`, { key }), 400, 'invalid_request');
    assert.equal(gw.audit.records.at(-1)?.service_id, '[redacted]');
    assert.ok(!JSON.stringify(gw.audit.records).includes(key));

    gw.audit.failing = true;
    try {
      const refused = await call(base, 'GET', '/v1/services/1/credentials', { key });
      expectProblem(refused, 503, 'store_unavailable');
      assert.ok(!refused.text.includes(gw.simulator.state.services[0]!.password));
    } finally {
      gw.audit.failing = false;
    }
  });

  t.test('POST /v1/services/{id}/actions → profile A actions, states and idempotency', async () => {
    const act = (id: string, action: string) =>
      call(base, 'POST', `/v1/services/${id}/actions`, { key, body: { action }, headers: { 'idempotency-key': freshKey() } });
    const reboot = await act('1', 'reboot');
    assert.equal(reboot.status, 200, reboot.text);
    assert.equal(reboot.json().outcome, 'completed');
    assert.equal(reboot.json().service.id, '1');

    const invalid = expectProblem(await act('1', 'suspend'), 422, 'invalid_action');
    assert.deepEqual(invalid.allowed_actions, ['start', 'stop', 'reboot', 'cancel', 'cancel_revoke']);
    // Empty and overlong names are outside the set too: the same answer, the name cut short in it.
    for (const name of ['', 'x'.repeat(500)]) {
      const outside = expectProblem(await act('1', name), 422, 'invalid_action');
      assert.deepEqual(outside.allowed_actions, invalid.allowed_actions);
      assert.ok(String(outside.detail).length < 200, String(outside.detail));
    }
    expectProblem(await act('1', 5 as unknown as string), 400, 'invalid_request');

    expectProblem(await act('2', 'reboot'), 409, 'action_not_allowed');
    expectProblem(await act('9', 'cancel'), 409, 'action_not_allowed');

    const cancel = await act('1', 'cancel');
    assert.equal(cancel.status, 202, cancel.text);
    assert.equal(cancel.json().outcome, 'scheduled');
    assert.match(cancel.json().effective_on, /^\d{4}-\d{2}-\d{2}$/);
    assert.equal(cancel.json().service.cancellation_requested, true);
    const revoke = await act('1', 'cancel_revoke');
    assert.equal(revoke.status, 200, revoke.text);
    assert.equal(revoke.json().service.cancellation_requested, false);
    expectProblem(await act('1', 'cancel_revoke'), 409, 'action_not_allowed');
  });

  t.test('GET /v1/billing/balance → credit as money', async () => {
    const response = await call(base, 'GET', '/v1/billing/balance', { key });
    assert.equal(response.status, 200);
    // Earlier orders in this suite may have used credit: compare with what the simulator holds.
    const credit = gw.simulator.state.clients.find((c) => c.id === 1)?.credit;
    assert.deepEqual(response.json(), { credit: { amount: credit, currency: 'USD' } });
  });

  t.test('GET /v1/billing/invoices → own invoices, paginated', async () => {
    const response = await call(base, 'GET', '/v1/billing/invoices?per_page=3', { key });
    assert.equal(response.status, 200);
    assert.equal(response.json().data.length, 3);
    assert.equal(response.json().meta.total, gw.simulator.state.invoices.filter((i) => i.clientId === 1).length);
    for (const invoice of response.json().data) assert.match(invoice.total.amount, /^\d+\.\d{2}$/);
  });

  t.test('GET /v1/billing/invoices/{id}/pdf → a PDF, the same bytes each time; errors stay JSON', async () => {
    const first = await call(base, 'GET', '/v1/billing/invoices/7/pdf', { key });
    assert.equal(first.status, 200);
    assert.equal(first.headers['content-type'], 'application/pdf');
    assert.equal(first.headers['content-disposition'], 'attachment; filename="invoice-7.pdf"');
    assert.equal(first.bytes.subarray(0, 5).toString(), '%PDF-');
    const second = await call(base, 'GET', '/v1/billing/invoices/7/pdf', { key });
    assert.ok(first.bytes.equals(second.bytes), 'deterministic');
    const empty = await call(base, 'GET', '/v1/billing/invoices/9/pdf', { key });
    assert.equal(empty.status, 200, 'an invoice without items still renders');
    expectProblem(await call(base, 'GET', '/v1/billing/invoices/11/pdf', { key }), 404, 'not_found');
    expectProblem(await call(base, 'GET', '/v1/billing/invoices/99999/pdf', { key }), 404, 'not_found');
  });

  t.test('GET/PUT /v1/webhooks → set returns the secret once, unset, URL checks', async () => {
    assert.deepEqual((await call(base, 'GET', '/v1/webhooks', { key })).json(), {
      url: null,
      updated_at: null,
      status: null,
      disabled_reason: null,
      last_delivery: null,
      failing_since: null,
    });
    const set = await call(base, 'PUT', '/v1/webhooks', { key, body: { url: 'https://hooks.example.com/rg' } });
    assert.equal(set.status, 200, set.text);
    assert.match(set.json().secret, /^whsec_[A-Za-z0-9+/=]{40,}$/);
    const read = await call(base, 'GET', '/v1/webhooks', { key });
    assert.equal(read.json().url, 'https://hooks.example.com/rg');
    assert.equal(read.json().status, 'enabled');
    const again = await call(base, 'PUT', '/v1/webhooks', { key, body: { url: 'https://hooks.example.com/rg2' } });
    assert.equal(again.json().secret, undefined, 'changing the URL keeps the secret');
    assert.ok(!read.text.includes(set.json().secret), 'the secret is shown once only');
    for (const url of ['http://hooks.example.com/', 'https://user:pw@hooks.example.com/', 'https://127.0.0.1/', 'https://169.254.169.254/latest', 'https://[::1]/', 'https://10.1.2.3/', 'https://x.internal-example.com/']) {
      const refused = expectProblem(await call(base, 'PUT', '/v1/webhooks', { key, body: { url } }), 422, 'validation_failed');
      assert.equal(refused.errors[0].pointer, '/url');
    }
    assert.equal((await call(base, 'GET', '/v1/webhooks', { key })).json().url, 'https://hooks.example.com/rg2', 'refusals change nothing');
    expectProblem(await call(base, 'PUT', '/v1/webhooks', { key, body: { url: null, extra: 1 } }), 400, 'invalid_request');
    const unset = await call(base, 'PUT', '/v1/webhooks', { key, body: { url: null } });
    assert.equal(unset.status, 200);
    assert.equal((await call(base, 'GET', '/v1/webhooks', { key })).json().url, null);
    const other = await call(base, 'GET', '/v1/webhooks', { key: gw.keys['beta:all'] });
    assert.equal(other.json().url, null, 'webhooks are per account');
  });
});

t.test('end to end, profile B', async (t) => {
  let gw: TestGateway;
  let base: string;
  let key: string;
  t.before(async () => {
    gw = await buildTestGateway({ profile: 'B', whmcs: { moduleFunctions: { virtualizor: { start: 'start', stop: 'stop', reboot: 'reboot', reinstall: 'reinstall' } } } });
    base = await gw.app.listen({ host: '127.0.0.1', port: 0 });
    key = gw.keys['acme:all'] as string;
  });
  t.teardown(() => gw.close());

  const act = (id: string, action: string, idem = freshKey()) =>
    call(base, 'POST', `/v1/services/${id}/actions`, { key, body: { action }, headers: { 'idempotency-key': idem } });

  t.test('runs the profile B action set and follows the service state', async () => {
    const invalid = expectProblem(await act('1', 'cancel'), 422, 'invalid_action');
    assert.deepEqual(invalid.allowed_actions, ['start', 'stop', 'reboot', 'reinstall', 'suspend', 'unsuspend', 'terminate']);
    const suspended = await act('1', 'suspend');
    assert.equal(suspended.status, 200, suspended.text);
    assert.equal(suspended.json().service.status, 'suspended');
    expectProblem(await act('1', 'suspend'), 409, 'action_not_allowed');
    expectProblem(await act('1', 'reboot'), 409, 'action_not_allowed');
    const unsuspended = await act('1', 'unsuspend');
    assert.equal(unsuspended.json().service.status, 'active');
    const reinstall = await act('1', 'reinstall');
    assert.equal(reinstall.status, 200, reinstall.text);
    const terminated = await act('10', 'terminate', freshKey());
    assert.equal(terminated.status, 404, 'beta\'s service is not acme\'s');
    const mine = await act('8', 'terminate');
    assert.equal(mine.json().service.status, 'terminated');
  });

  t.test('a module without a configured function refuses power actions without calling WHMCS', async () => {
    gw.simulator.calls.length = 0;
    const response = await act('9', 'start');
    assert.ok([409, 422].includes(response.status), response.text);
    assert.ok(!gw.simulator.calls.some((c) => c.action === 'modulecustom'));
  });

  t.test('the same key on another endpoint is a conflict in profile B too', async () => {
    const idem = freshKey();
    assert.equal((await act('1', 'reboot', idem)).status, 200);
    const order = await call(base, 'POST', '/v1/orders', { key, body: { product_id: '1', billing_cycle: 'monthly' }, headers: { 'idempotency-key': idem } });
    expectProblem(order, 409, 'idempotency_conflict');
  });
});
