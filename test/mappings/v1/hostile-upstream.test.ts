/**
 * A v1 upstream that misbehaves: silent, slow, oversized, redirecting, answering HTML, garbage or a
 * cut-off body, or problems of its own. The client always gets one of this gateway's problems (or
 * the upstream's own problem, passed through where it is the client's business), never the
 * upstream's text, and writes stay safe to retry.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, ORDER, type PassthroughGateway, problem, SERVICE, UPSTREAM_KEYS } from './harness.js';

function expectProblem(response: LightMyRequestResponse, status: number, reason: string): any {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  const body = response.json();
  assert.equal(body.reason, reason, response.body);
  assert.equal(body.request_id, response.headers['x-request-id']);
  return body;
}

t.test('v1 passthrough: a hostile upstream', async (t) => {
  let gw: PassthroughGateway;
  let getService: () => Promise<LightMyRequestResponse>;
  t.before(async () => {
    // Settle time just above the write deadline, so that a retry reconciles within the test.
    gw = await buildPassthroughGateway({ config: { idempotency: { settleMs: 800, leaseMarginMs: 100 } } });
    getService = () => gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:all']) });
  });
  t.teardown(() => gw.close());
  t.beforeEach(() => {
    gw.upstream.received.length = 0;
  });

  t.test('no answer within the deadline → 504', async () => {
    gw.upstream.answer(() => undefined);
    const started = Date.now();
    expectProblem(await getService(), 504, 'upstream_timeout');
    assert.ok(Date.now() - started < 2_000);
  });

  t.test('a body that drips in past the deadline → 504: the deadline covers the whole answer', async () => {
    gw.upstream.answer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => (response.destroyed ? clearInterval(timer) : response.write(' ')), 50);
    });
    expectProblem(await getService(), 504, 'upstream_timeout');
  });

  t.test('an answer over the size cap → 502, whether declared or streamed', async () => {
    const big = { ...SERVICE, product_name: 'x'.repeat(5000) };
    gw.upstream.answer(json(200, big));
    expectProblem(await getService(), 502, 'upstream_error');
    gw.upstream.answer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(big));
    });
    expectProblem(await getService(), 502, 'upstream_error');
  });

  t.test('a redirect → 502, not followed', async () => {
    gw.upstream.answer((request, response) => {
      if (request.url === '/elsewhere') return json(200, SERVICE)(request, response, undefined as never);
      response.writeHead(302, { location: '/elsewhere' });
      response.end();
    });
    expectProblem(await getService(), 502, 'upstream_error');
    assert.deepEqual(gw.upstream.received.map((r) => r.url), ['/v1/services/7']);
  });

  t.test('an HTML error page → 502 Problem+JSON without the upstream\'s words; the operator sees them', async () => {
    gw.upstream.answer((_request, response) => {
      response.writeHead(500, { 'content-type': 'text/html' });
      response.end('<html><body><h1>Fatal error</h1> in /var/www/panel/index.php line 12</body></html>');
    });
    const body = expectProblem(await getService(), 502, 'upstream_error');
    assert.doesNotMatch(JSON.stringify(body), /Fatal|panel|<h1>/);
    assert.ok(gw.logs.some((line) => line.includes('answered 500 (text/html)') && line.includes('Fatal error')));
  });

  for (const [what, script] of [
    ['garbage JSON', (_q: unknown, response: import('node:http').ServerResponse) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"id": "7", "status": act');
    }],
    ['a body that is not the contract\'s', json(200, { id: '7', status: 'active' })],
    ['HTML with 200', (_q: unknown, response: import('node:http').ServerResponse) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html>Maintenance</html>');
    }],
    ['a status the endpoint does not document', json(201, SERVICE)],
    ['a cut-off body', (_q: unknown, response: import('node:http').ServerResponse) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      response.write('{"id":"7",');
      setTimeout(() => response.socket?.destroy(), 20);
    }],
    ['a reset connection', (_q: unknown, response: import('node:http').ServerResponse) => response.socket?.destroy()],
  ] as const) {
    t.test(`${what} → 502`, async () => {
      gw.upstream.answer(script as never);
      expectProblem(await getService(), 502, 'upstream_error');
    });
  }

  t.test('another record than the one asked for → 502, nothing of it passed on; the operator sees which', async () => {
    const acme = bearer(gw.keys['acme:all']);
    const other = { ...SERVICE, id: '8', hostname: 'beta-only.example.com' };
    for (const [url, body] of [
      ['/v1/services/7', other],
      ['/v1/services/7/credentials', { service_id: '8', username: 'beta', password: 'beta-secret', hostname: null, ip_addresses: [] }],
      ['/v1/orders/42', { ...ORDER, id: '43' }],
    ] as const) {
      gw.upstream.answer(json(200, body));
      const response = await gw.app.inject({ method: 'GET', url, headers: acme });
      const problemBody = expectProblem(response, 502, 'upstream_error');
      assert.doesNotMatch(JSON.stringify(problemBody), /beta/, url);
      assert.ok(gw.logs.some((line) => line.includes('with another record than')), url);
    }
    // The record asked for passes, as before.
    gw.upstream.answer(json(200, SERVICE));
    assert.equal((await getService()).statusCode, 200);
  });

  t.test("another account than the key's (/v1/me), another invoice's PDF → 502, nothing of it passed on", async () => {
    const acme = bearer(gw.keys['acme:all']);
    const key = { id: 'k', name: 'passthrough', scopes: ['read:services'], created_at: '2026-01-01T00:00:00Z', expires_at: null, rate_limits: { per_minute: 1, burst: 1, per_day: 1, account_per_minute: null } };
    gw.upstream.answer(json(200, { account: { id: 'up-beta', name: 'Beta Reseller', company: null, email: 'ops@beta.example', status: 'active', currency: 'EUR' }, key }));
    const me = expectProblem(await gw.app.inject({ method: 'GET', url: '/v1/me', headers: acme }), 502, 'upstream_error');
    assert.doesNotMatch(JSON.stringify(me), /beta/i);
    assert.ok(gw.logs.some((line) => line.includes('answered for account \\"up-beta\\", not \\"up-acme\\"')));
    const pdf = (disposition: string) => gw.upstream.answer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/pdf', 'content-disposition': disposition });
      response.end('%PDF-1.4 beta');
    });
    pdf('attachment; filename="invoice-10.pdf"');
    expectProblem(await gw.app.inject({ method: 'GET', url: '/v1/billing/invoices/9/pdf', headers: acme }), 502, 'upstream_error');
    assert.ok(gw.logs.some((line) => line.includes('the document of another record than 9')));
    // Its own invoice, however the upstream names it otherwise, passes.
    pdf('attachment; filename="invoice-9.pdf"');
    assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/billing/invoices/9/pdf', headers: acme })).statusCode, 200);
  });

  t.test('its problems pass through with their status, reason and detail, under this gateway\'s request id', async () => {
    gw.upstream.answer(problem(404, 'not_found'));
    const notFound = expectProblem(await getService(), 404, 'not_found');
    assert.equal(notFound.detail, 'upstream says not_found');
    assert.notEqual(notFound.request_id, 'upstream-request-id');
    assert.equal(notFound.type, 'https://reseller-gateway.dev/problems/not_found');

    // Narrowed to this contract's actions, then to this gateway's profile (A: no reinstall, no terminate).
    gw.upstream.answer(problem(422, 'invalid_action', { allowed_actions: ['start', 'cancel', 'format_disk', 'reinstall', 'terminate'] }));
    const invalid = expectProblem(
      await gw.app.inject({ method: 'POST', url: '/v1/services/7/actions', headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': 'act-invalid' }, payload: { action: 'reboot' } }),
      422,
      'invalid_action',
    );
    assert.deepEqual(invalid.allowed_actions, ['start', 'cancel']);
    assert.equal(invalid.detail, 'upstream says invalid_action');

    gw.upstream.answer(problem(503, 'outcome_unknown', {}, { 'retry-after': '12' }));
    const unknown = await gw.app.inject({ method: 'POST', url: '/v1/orders', headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': 'order-unknown' }, payload: { product_id: '1', billing_cycle: 'monthly' } });
    expectProblem(unknown, 503, 'outcome_unknown');
    assert.equal(unknown.headers['retry-after'], '12');
  });

  t.test('its refusal of a write is stored: the replay answers it without asking again', async () => {
    gw.upstream.answer(problem(409, 'action_not_allowed'));
    const request = { method: 'POST' as const, url: '/v1/services/7/actions', headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': 'act-refused' }, payload: { action: 'cancel' } };
    expectProblem(await gw.app.inject(request), 409, 'action_not_allowed');
    const replay = await gw.app.inject(request);
    // The stored answer, as first given (its request id included).
    assert.equal(replay.statusCode, 409);
    assert.equal(replay.json().reason, 'action_not_allowed');
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(gw.upstream.received.length, 1);
  });

  t.test('its refusal of the gateway\'s key → 502 and an operator line; its rate limit → 503 with its Retry-After', async () => {
    gw.upstream.answer(problem(401, 'unauthenticated'));
    const refused = expectProblem(await getService(), 502, 'upstream_error');
    assert.doesNotMatch(refused.detail, /key|unauthenticated/i);
    assert.ok(gw.logs.some((line) => line.includes('the upstream refused this account\'s key')));
    gw.upstream.answer(problem(429, 'rate_limited', { violated_policies: ['key_minute'] }, { 'retry-after': '7' }));
    const limited = await getService();
    const body = expectProblem(limited, 503, 'upstream_unavailable');
    assert.equal(limited.headers['retry-after'], '7');
    assert.equal(body.violated_policies, undefined);
  });

  t.test('an upstream that echoes the account\'s upstream key: neither the client nor the log sees it', async () => {
    const key = UPSTREAM_KEYS['up-acme'];
    const logged = gw.logs.length;
    gw.upstream.answer((_request, response) => {
      response.writeHead(401, { 'content-type': 'text/html' });
      response.end(`<p>Bad key &quot;${key}&quot;</p>${'.'.repeat(180)}<p>Authorization: Bearer ${key}</p>`);
    });
    expectProblem(await getService(), 502, 'upstream_error');
    gw.upstream.answer(problem(404, 'not_found', { detail: `no service for key ${key}` }));
    assert.equal(expectProblem(await getService(), 404, 'not_found').detail, 'no service for key [redacted]');
    gw.upstream.answer(problem(500, 'internal_error', { detail: `backend rejected ${encodeURIComponent(key)}` }));
    expectProblem(await getService(), 502, 'upstream_error');
    const lines = gw.logs.slice(logged).join('');
    assert.match(lines, /Bad key/, 'the operator still reads what the upstream said');
    assert.ok(!lines.includes(key.slice(0, 12)), lines);
  });

  t.test('a problem whose status is not its reason\'s, or an unknown reason → 502', async () => {
    gw.upstream.answer(problem(404, 'upstream_error'));
    expectProblem(await getService(), 502, 'upstream_error');
    gw.upstream.answer(problem(418, 'teapot'));
    expectProblem(await getService(), 502, 'upstream_error');
  });

  t.test('a write that times out is not sent again blindly: the retry forwards the same upstream key', async () => {
    gw.upstream.answer(() => undefined);
    const request = { method: 'POST' as const, url: '/v1/orders', headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': 'order-timeout' }, payload: { product_id: '1', billing_cycle: 'monthly' } };
    expectProblem(await gw.app.inject(request), 504, 'upstream_timeout');
    // Within the settle time the upstream may still be working on it.
    expectProblem(await gw.app.inject(request), 409, 'idempotency_in_progress');
    await new Promise((resolve) => setTimeout(resolve, 900));
    gw.upstream.answer(json(201, ORDER, { location: '/v1/orders/42' }));
    const retry = await gw.app.inject(request);
    assert.equal(retry.statusCode, 201, retry.body);
    const keys = gw.upstream.received.map((r) => r.headers['idempotency-key']);
    assert.equal(keys.length, 2);
    assert.equal(keys[0], keys[1], 'the upstream can tell it is the same order');
  });

  t.test('the upstream down → 503 with Retry-After; health and readiness say so', async () => {
    const gateway = await buildPassthroughGateway();
    try {
      await gateway.upstream.close();
      const response = await gateway.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gateway.keys['acme:all']) });
      expectProblem(response, 503, 'upstream_unavailable');
      assert.ok(Number(response.headers['retry-after']) >= 1);
      expectProblem(await gateway.app.inject({ method: 'GET', url: '/v1/health' }), 503, 'upstream_unavailable');
      assert.equal((await gateway.app.readiness.check()).upstream, 'down');
    } finally {
      await gateway.app.close();
    }
  });
});
