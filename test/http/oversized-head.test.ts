/**
 * Requests too large for the parser or for the gateway's URL limit, sent over a raw socket as a
 * client would: a URL over the limit is 414 `uri_too_long` (RFC 9110 §15.5.15), a header block
 * over Node's limit 431 `headers_too_large` (RFC 6585 §5), both problems whose request_id is the
 * X-Request-Id sent with them; a long URL within the limit is served.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { rawExchange } from '../helpers/http.js';
import { buildTestGateway, type TestGateway } from '../helpers/gateway.js';

function problemOf(raw: string, status: number, what: string): Record<string, unknown> {
  assert.match(raw, new RegExp(`^HTTP/1\\.1 ${status} `), `${what}: ${raw.slice(0, 300)}`);
  assert.match(raw, /content-type: application\/problem\+json/i, what);
  const requestId = /x-request-id: ([0-9a-f-]{36})/i.exec(raw)?.[1];
  assert.ok(requestId, `${what}: no X-Request-Id`);
  const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
  assert.equal(body.request_id, requestId, what);
  assert.equal(body.status, status, what);
  assert.equal(body.instance, `urn:uuid:${requestId}`, what);
  return body;
}

t.test('oversized request lines and headers are 414 / 431 problems', async (t) => {
  let gw: TestGateway;
  let port: number;
  t.before(async () => {
    gw = await buildTestGateway();
    port = Number(new URL(await gw.app.listen({ host: '127.0.0.1', port: 0 })).port);
  });
  t.teardown(() => gw.close());
  const get = (target: string, headers = '') => rawExchange(port, `GET ${target} HTTP/1.1\r\nHost: x\r\n${headers}Connection: close\r\n\r\n`);

  t.test('a 20 KB URL → 414 uri_too_long', async () => {
    const body = problemOf(await get(`/v1/services?x=${'a'.repeat(20_000)}`), 414, '20 KB URL');
    assert.equal(body.reason, 'uri_too_long');
  });

  t.test('a URL over 8 KiB but under the parser limit → 414 uri_too_long, before any key check', async () => {
    const body = problemOf(await get(`/v1/services?x=${'a'.repeat(9_000)}`), 414, '9 KB URL');
    assert.equal(body.reason, 'uri_too_long');
  });

  t.test('a 20 KB header block → 431 headers_too_large', async () => {
    const block = Array.from({ length: 40 }, (_, i) => `X-H${i}: ${'b'.repeat(500)}\r\n`).join('');
    assert.equal(problemOf(await get('/v1/health', block), 431, '20 KB block').reason, 'headers_too_large');
  });

  t.test('one huge header → 431 headers_too_large, its request id logged and nothing of the request', async () => {
    const key = gw.keys['acme:all'] as string;
    const body = problemOf(await get('/v1/health', `Authorization: Bearer ${key}\r\nX-Big: ${'a'.repeat(20_000)}\r\n`), 431, 'one huge header');
    assert.equal(body.reason, 'headers_too_large');
    const line = gw.logs.find((each) => each.includes(body.request_id as string));
    assert.ok(line, 'the refusal is logged under its request id');
    assert.ok(!line.includes(key.slice(-12)) && !line.includes('aaaa'), line);
  });

  t.test('very many small headers → 431 headers_too_large', async () => {
    const many = Array.from({ length: 3000 }, (_, i) => `X${i}: 1\r\n`).join('');
    assert.equal(problemOf(await get('/v1/health', many), 431, 'many headers').reason, 'headers_too_large');
  });

  t.test('an 8 KB query within the limit is served', async () => {
    const raw = await get(`/v1/services?x=${'a'.repeat(8_000)}`, `Authorization: Bearer ${gw.keys['acme:all']}\r\n`);
    assert.match(raw, /^HTTP\/1\.1 200 /, raw.slice(0, 300));
  });
});
