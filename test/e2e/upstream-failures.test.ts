/**
 * Upstream failures as the client sees them (contract §2): normalised problems, no upstream text,
 * an operator log line where the operator must act, and no duplicate order after a timeout.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildTestGateway, type TestGateway } from '../helpers/gateway.js';
import { call, type HttpResponse } from '../helpers/http.js';

function expectProblem(response: HttpResponse, status: number, reason: string): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.json().reason, reason);
}

t.test('upstream failures', async (t) => {
  let gw: TestGateway;
  let base: string;
  let key: string;
  t.before(async () => {
    gw = await buildTestGateway({
      // Reads get time to spare on a loaded machine; the writes under test time out quickly.
      whmcs: { timeoutMs: 2_000, actionTimeoutsMs: { AddOrder: 400, ModuleCustom: 400, GetInvoices: 400 } },
      config: { idempotency: { leaseMarginMs: 100 } },
    });
    base = await gw.app.listen({ host: '127.0.0.1', port: 0 });
    key = gw.keys['acme:all'] as string;
  });
  t.teardown(() => gw.close());

  t.test('WHMCS 403 (IP allow-list) → 502 without the upstream text, and an operator log line', async () => {
    gw.simulator.inject({ action: 'GetClientsDetails', kind: 'forbidden', message: 'Invalid IP 203.0.113.7', times: 1 });
    const response = await call(base, 'GET', '/v1/me', { key });
    expectProblem(response, 502, 'upstream_error');
    assert.ok(!response.text.includes('203.0.113.7'));
    assert.ok(!response.text.includes('Invalid IP'));
    assert.ok(gw.logs.some((line) => line.includes('Invalid IP 203.0.113.7') && line.includes('"level":50')), 'logged for the operator');
  });

  for (const kind of ['http500', 'html', 'malformed'] as const) {
    t.test(`${kind} answer → 502 upstream_error`, async () => {
      gw.simulator.inject({ action: 'GetClientsProducts', kind, times: 1 });
      const response = await call(base, 'GET', '/v1/services', { key });
      expectProblem(response, 502, 'upstream_error');
      assert.ok(!/<html|DOCTYPE/i.test(response.text));
    });
  }

  t.test('a failing read behind the balance → 502', async () => {
    gw.simulator.inject({ action: 'GetCredits', kind: 'http500', times: 1 });
    gw.simulator.inject({ action: 'GetClientsDetails', kind: 'malformed', times: 1 });
    expectProblem(await call(base, 'GET', '/v1/billing/balance', { key }), 502, 'upstream_error');
  });

  t.test('no answer in time → 504 upstream_timeout', async () => {
    gw.simulator.inject({ action: 'GetInvoices', kind: 'hang', times: 1 });
    expectProblem(await call(base, 'GET', '/v1/billing/invoices', { key }), 504, 'upstream_timeout');
  });

  t.test('a connection reset on a read and on its retry → 502, and the next call works', async () => {
    gw.simulator.inject({ action: 'GetInvoices', kind: 'reset', times: 2 });
    const response = await call(base, 'GET', '/v1/billing/invoices', { key });
    assert.ok([502, 503].includes(response.status), response.text);
    assert.equal((await call(base, 'GET', '/v1/billing/invoices', { key })).status, 200);
  });

  t.test('a single connection reset on a read is absorbed by its one retry', async () => {
    const sent = () => gw.simulator.calls.filter((c) => c.action === 'getinvoices').length;
    const before = sent();
    gw.simulator.inject({ action: 'GetInvoices', kind: 'reset', times: 1 });
    const response = await call(base, 'GET', '/v1/billing/invoices', { key });
    assert.equal(response.status, 200, response.text);
    assert.equal(sent() - before, 2, 'sent again once');
  });

  // What happens once the settle time has passed: test/idempotency/reconciliation.test.ts.
  t.test('an order placed upstream whose answer timed out is not placed again while WHMCS may still be working on it', async () => {
    const before = gw.simulator.state.orders.length;
    gw.simulator.inject({ action: 'AddOrder', kind: 'stall_after_effect', ms: 1500, times: 1 });
    const headers = { 'idempotency-key': 'stalled-order-1' };
    const body = { product_id: '2', billing_cycle: 'monthly' };
    const first = await call(base, 'POST', '/v1/orders', { key, body, headers });
    expectProblem(first, 504, 'upstream_timeout');
    assert.equal(gw.simulator.state.orders.length, before + 1, 'WHMCS did place it');
    const retry = await call(base, 'POST', '/v1/orders', { key, body, headers });
    expectProblem(retry, 409, 'idempotency_in_progress');
    assert.ok(Number(retry.headers['retry-after']) >= 1);
    assert.equal(gw.simulator.state.orders.length, before + 1, 'and only once');
  });

  t.test('a power action whose outcome is unknown is not run again blindly', async () => {
    gw.simulator.inject({ action: 'ModuleCustom', kind: 'stall_after_effect', ms: 1500, times: 1 });
    const headers = { 'idempotency-key': 'stalled-reboot-1' };
    const first = await call(base, 'POST', '/v1/services/1/actions', { key, body: { action: 'reboot' }, headers });
    expectProblem(first, 504, 'upstream_timeout');
    const calls = gw.simulator.calls.filter((c) => c.action === 'modulecustom').length;
    const retry = await call(base, 'POST', '/v1/services/1/actions', { key, body: { action: 'reboot' }, headers });
    expectProblem(retry, 409, 'idempotency_in_progress');
    assert.equal(gw.simulator.calls.filter((c) => c.action === 'modulecustom').length, calls, 'not sent again');
  });
});

t.test('upstream unreachable', async (t) => {
  let gw: TestGateway;
  t.before(async () => {
    gw = await buildTestGateway();
    await gw.simulator.close();
  });
  t.teardown(() => gw.app.close());

  t.test('connection refused → 503 upstream_unavailable with Retry-After; health says so', async () => {
    const response = await gw.app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${gw.keys['acme:all']}` } });
    assert.equal(response.statusCode, 503, response.body);
    assert.equal(response.json().reason, 'upstream_unavailable');
    assert.ok(Number(response.headers['retry-after']) >= 1);
    const health = await gw.app.inject({ method: 'GET', url: '/v1/health' });
    assert.equal(health.statusCode, 503);
    assert.equal(health.json().reason, 'upstream_unavailable');
  });
});

t.test('circuit breaker', async (t) => {
  const OPEN_MS = 500;
  const TIMEOUT_MS = 600;
  let gw: TestGateway;
  t.before(async () => {
    gw = await buildTestGateway({ whmcs: { timeoutMs: TIMEOUT_MS, circuitBreaker: { failureThreshold: 2, openMs: OPEN_MS } } });
  });
  t.teardown(() => gw.close());

  const me = () => gw.app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${gw.keys['acme:all']}` } });
  const reboot = () =>
    gw.app.inject({
      method: 'POST',
      url: '/v1/services/1/actions',
      headers: { authorization: `Bearer ${gw.keys['acme:all']}`, 'idempotency-key': 'breaker-reboot-1' },
      payload: { action: 'reboot' },
    });

  t.test('a hanging WHMCS: after N timeouts, 503 at once without calling it; served again once it answers and openMs has passed', async () => {
    assert.equal((await me()).statusCode, 200);
    gw.simulator.inject({ kind: 'hang' });
    for (let i = 0; i < 2; i += 1) assert.equal((await me()).statusCode, 504);

    // Failing fast is shown by WHMCS receiving nothing (no timing assertions in tests).
    const calls = gw.simulator.calls.length;
    const response = await me();
    assert.equal(response.statusCode, 503, response.body);
    assert.equal(response.json().reason, 'upstream_unavailable');
    assert.equal(response.headers['retry-after'], '1', 'the breaker\'s own hint: it opens for 500 ms');
    const write = await reboot();
    assert.equal(write.statusCode, 503, write.body);
    assert.equal(write.json().reason, 'upstream_unavailable');
    assert.equal(gw.simulator.calls.length, calls, 'nothing reached WHMCS while open');
    assert.equal(gw.logs.filter((line) => line.includes('circuit breaker opened') && line.includes('"level":50')).length, 1);

    gw.simulator.clearFaults();
    await sleep(OPEN_MS + 50);
    assert.equal((await me()).statusCode, 200);
    assert.equal((await me()).statusCode, 200);
    const retried = await reboot();
    assert.ok(retried.statusCode < 300, retried.body);
    assert.ok(gw.logs.some((line) => line.includes('circuit breaker closed')));
    for (const secret of [gw.simulator.identifier, gw.simulator.secret]) {
      assert.ok(!gw.logs.some((line) => line.includes(secret)), 'no credential in the logs');
    }
  });
});
