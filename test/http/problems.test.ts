import assert from 'node:assert/strict';
import t from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { bearer, buildTestGateway, type TestGateway } from '../helpers/gateway.js';
import { rawExchange } from '../helpers/http.js';

function assertProblem(response: LightMyRequestResponse, status: number, reason: string): Record<string, unknown> {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  assert.match(String(response.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  const body = response.json() as Record<string, unknown>;
  assert.equal(body.status, status);
  assert.equal(body.reason, reason);
  assert.equal(body.request_id, response.headers['x-request-id']);
  assert.equal(body.instance, `urn:uuid:${String(response.headers['x-request-id'])}`);
  assert.match(String(body.type), new RegExp(`^https://.+/${reason}$`));
  for (const field of ['title', 'detail']) assert.equal(typeof body[field], 'string');
  assert.doesNotMatch(response.body, /at .+\.(ts|js):\d+/, 'no stack trace');
  return body;
}

t.test('every failure is Problem+JSON', async (t) => {
  let gw: TestGateway;
  t.before(async () => {
    gw = await buildTestGateway();
  });
  t.teardown(() => gw.close());

  const order = { product_id: '1', billing_cycle: 'monthly' };
  const post = (payload: string, headers: Record<string, string> = {}) =>
    gw.app.inject({
      method: 'POST',
      url: '/v1/orders',
      headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json', 'idempotency-key': 'k1', ...headers },
      payload,
    });

  t.test('unknown route → 404 not_found', async () => {
    assertProblem(await gw.app.inject({ method: 'GET', url: '/v1/nope' }), 404, 'not_found');
    assertProblem(await gw.app.inject({ method: 'GET', url: '/' }), 404, 'not_found');
  });

  t.test('a known path with a trailing slash is not a known path → 404, whatever the method', async () => {
    for (const [method, url] of [['GET', '/v1/me/'], ['POST', '/v1/orders/'], ['DELETE', '/v1/services/5/']] as const) {
      const response = await gw.app.inject({ method, url, headers: bearer(gw.keys['acme:all']) });
      assertProblem(response, 404, 'not_found');
      assert.equal(response.headers.allow, undefined, `${method} ${url}`);
    }
  });

  t.test('known path, wrong method → 405 with Allow', async () => {
    const response = await gw.app.inject({ method: 'DELETE', url: '/v1/services/5' });
    assertProblem(response, 405, 'method_not_allowed');
    assert.equal(response.headers.allow, 'GET, HEAD');
    const webhooks = await gw.app.inject({ method: 'POST', url: '/v1/webhooks' });
    assertProblem(webhooks, 405, 'method_not_allowed');
    assert.equal(webhooks.headers.allow, 'GET, HEAD, PUT');
  });

  t.test('body over the limit → 413', async () => {
    assertProblem(await post(JSON.stringify({ ...order, hostname: 'a'.repeat(70_000) })), 413, 'payload_too_large');
  });

  t.test('a body that is not JSON → 415', async () => {
    assertProblem(await post('product_id=1', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type');
    assertProblem(await post('hello', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type');
  });

  t.test('malformed JSON → 400 invalid_request', async () => {
    assertProblem(await post('{"product_id": '), 400, 'invalid_request');
  });

  t.test('__proto__ and constructor.prototype payloads → 400', async () => {
    for (const body of ['{"__proto__": {"admin": true}, "product_id": "1", "billing_cycle": "monthly"}', '{"constructor": {"prototype": {"admin": true}}}']) {
      assert.match(assertProblem(await post(body), 400, 'invalid_request').detail as string, /forbidden property name/);
    }
    assert.equal(({} as Record<string, unknown>).admin, undefined);
  });

  t.test('unknown body fields → 400 with pointers', async () => {
    const body = assertProblem(await post(JSON.stringify({ ...order, clientid: '3' })), 400, 'invalid_request');
    assert.deepEqual(body.errors, [{ pointer: '/clientid', detail: 'is not a field of this request' }]);
  });

  t.test('wrong types → 400 with a pointer per field', async () => {
    const body = assertProblem(await post(JSON.stringify({ product_id: 7, billing_cycle: 'weekly' })), 400, 'invalid_request');
    const pointers = (body.errors as Array<{ pointer: string }>).map((e) => e.pointer).sort();
    assert.deepEqual(pointers, ['/billing_cycle', '/product_id']);
    // A field sent with the wrong type is not a missing one: the detail says which it is.
    const errors = body.errors as Array<{ pointer: string; detail: string }>;
    assert.match(errors.find((e) => e.pointer === '/product_id')?.detail ?? '', /expected string, received number/);
    const missing = assertProblem(await post(JSON.stringify({ billing_cycle: 'monthly' })), 400, 'invalid_request');
    assert.deepEqual(missing.errors, [{ pointer: '/product_id', detail: 'is required' }]);
    const nulled = assertProblem(await post(JSON.stringify({ ...order, product_id: null })), 400, 'invalid_request');
    assert.match((nulled.errors as Array<{ detail: string }>)[0]?.detail ?? '', /received null/);
  });

  t.test('bad pagination → 400 pointing at the query', async () => {
    const response = await gw.app.inject({ method: 'GET', url: '/v1/services?per_page=500', headers: bearer(gw.keys['acme:all']) });
    const body = assertProblem(response, 400, 'invalid_request');
    assert.deepEqual(body.errors, [{ pointer: '/query/per_page', detail: 'Expected a whole number from 1 to 100.' }]);
    for (const [query, detail] of [
      ['per_page=0', 'Expected a whole number from 1 to 100.'],
      ['page=0', 'Expected a whole number from 1 to 1000000.'],
      ['page=abc', 'Expected a whole number in decimal digits.'],
    ] as const) {
      const answer = await gw.app.inject({ method: 'GET', url: `/v1/services?${query}`, headers: bearer(gw.keys['acme:all']) });
      assert.deepEqual(assertProblem(answer, 400, 'invalid_request').errors, [{ pointer: `/query/${query.split('=')[0]}`, detail }], query);
    }
  });

  t.test('pagination in anything but decimal digits → 400, as any other bad value', async () => {
    for (const query of ['page=0x2', 'per_page=1e1', 'per_page=0b11', 'page=%201', 'page=2.0', 'page=', 'page=-1']) {
      const response = await gw.app.inject({ method: 'GET', url: `/v1/services?${query}`, headers: bearer(gw.keys['acme:all']) });
      const body = assertProblem(response, 400, 'invalid_request');
      assert.deepEqual((body.errors as Array<{ pointer: string }>).map((e) => e.pointer), [`/query/${query.split('=')[0]}`], query);
    }
    const decimal = await gw.app.inject({ method: 'GET', url: '/v1/services?page=1&per_page=010', headers: bearer(gw.keys['acme:all']) });
    assert.equal(decimal.statusCode, 200, decimal.body);
    assert.deepEqual([decimal.json().meta.page, decimal.json().meta.per_page], [1, 10]);
  });

  t.test('Idempotency-Key missing or invalid → 400', async () => {
    const missing = await gw.app.inject({
      method: 'POST',
      url: '/v1/orders',
      headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json' },
      payload: JSON.stringify(order),
    });
    assertProblem(missing, 400, 'idempotency_key_missing');
    for (const bad of ['', 'has space', 'x'.repeat(81), 'ключ', 'a/b', '""', '"a', 'a"', '"a b"', `"${'x'.repeat(81)}"`, '"\\"a\\""']) {
      assertProblem(await post(JSON.stringify(order), { 'idempotency-key': bad }), 400, 'idempotency_key_invalid');
    }
  });

  t.test('over-long or malformed ids → 400, also past the router\'s parameter limit', async () => {
    const headers = bearer(gw.keys['acme:all']);
    assertProblem(await gw.app.inject({ method: 'GET', url: `/v1/services/${'9'.repeat(40)}`, headers }), 400, 'invalid_request');
    assertProblem(await gw.app.inject({ method: 'GET', url: `/v1/services/${'9'.repeat(500)}`, headers }), 400, 'invalid_request');
    assertProblem(await gw.app.inject({ method: 'GET', url: '/v1/services/%E0%A4%A', headers }), 400, 'invalid_request');
    assertProblem(await gw.app.inject({ method: 'GET', url: '/v1/services/0', headers }), 400, 'invalid_request');
    assertProblem(await gw.app.inject({ method: 'GET', url: '/v1/services/1%00', headers }), 400, 'invalid_request');
  });

  t.test('requests Node cannot read (oversized headers) → 431 problem with a request id', async () => {
    const base = await gw.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = new URL(base);
    const raw = await rawExchange(Number(port), `GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    assert.match(raw, /^HTTP\/1\.1 431 /);
    assert.match(raw, /content-type: application\/problem\+json/i);
    assert.match(raw, /x-request-id: [0-9a-f-]{36}/i);
    const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    assert.equal(body.reason, 'headers_too_large');
  });

  t.test('an incoming X-Request-Id is not trusted', async () => {
    const response = await gw.app.inject({ method: 'GET', url: '/v1/health', headers: { 'x-request-id': 'evil' } });
    assert.notEqual(response.headers['x-request-id'], 'evil');
    assert.ok(gw.logs.some((line) => line.includes('"client_request_id":"evil"')));
  });

  t.test('a key in the query string → 400 and never logged', async () => {
    const key = gw.keys['acme:all'] as string;
    for (const query of [`api_key=${key}`, `API_KEY=${key}`, `Access_Token=${key}`, `page=1&q=${key}`]) {
      assertProblem(await gw.app.inject({ method: 'GET', url: `/v1/me?${query}` }), 400, 'invalid_request');
    }
    assert.ok(!gw.logs.join('').includes(key));
  });
});

t.test("the framework's and plugins' 400s are told apart: only a body that could not be parsed is called one", async () => {
  const { toApiError } = await import('../../src/http/problems.js');
  const parse = Object.assign(new SyntaxError('Unexpected token } in JSON'), { statusCode: 400 });
  assert.match(toApiError(parse).detail, /not valid JSON/);
  const empty = Object.assign(new Error('empty'), { statusCode: 400, code: 'FST_ERR_CTP_EMPTY_JSON_BODY' });
  assert.match(toApiError(empty).detail, /empty but declared as JSON/);
  // As the passthrough's proxy refused a request target it took for a foreign destination.
  const refused = Object.assign(new Error('source/request contain invalid characters'), { statusCode: 400 });
  const problem = toApiError(refused);
  assert.equal(problem.reason, 'invalid_request');
  assert.equal(problem.detail, 'The request could not be read as sent.');
});
