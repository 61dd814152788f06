/**
 * `Expect: 100-continue` (RFC 9110 §10.1.1), over raw sockets: the gateway sends 100 Continue only
 * once the request passed every check that does not need its body (key, scope, limits, declared
 * length and type); a request refused before that gets its final answer and no 100, so a client
 * that waits for it never uploads a body only to have it refused. Another expectation is 417.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { expectingExchange, rawExchange } from '../helpers/http.js';
import { buildTestGateway, type TestGateway } from '../helpers/gateway.js';

function head(method: string, path: string, headers: Record<string, string>): string {
  const lines = Object.entries({ host: 'x', expect: '100-continue', ...headers }).map(([name, value]) => `${name}: ${value}\r\n`);
  return `${method} ${path} HTTP/1.1\r\n${lines.join('')}\r\n`;
}

function assertRefusedWithoutContinue(raw: string, status: number, reason: string): void {
  assert.ok(!raw.includes('100 Continue'), `a 100 Continue was sent before the ${status}: ${raw.slice(0, 200)}`);
  assert.match(raw, new RegExp(`^HTTP/1\\.1 ${status} `), raw.slice(0, 300));
  assert.match(raw, /content-type: application\/problem\+json/i);
  assert.equal(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).reason, reason);
}

const BODY = JSON.stringify({ url: null });

t.test('Expect: 100-continue is answered only after the checks that need no body', async (t) => {
  let gw: TestGateway;
  let port: number;
  t.before(async () => {
    gw = await buildTestGateway();
    port = Number(new URL(await gw.app.listen({ host: '127.0.0.1', port: 0 })).port);
  });
  t.teardown(() => gw.close());
  const json = { 'content-type': 'application/json', 'content-length': String(BODY.length) };
  const as = (label: string) => ({ authorization: `Bearer ${gw.keys[label]}` });

  t.test('no key → 401, no 100', async () => {
    assertRefusedWithoutContinue(await expectingExchange(port, head('PUT', '/v1/webhooks', json), BODY), 401, 'unauthenticated');
  });

  t.test('a key without the scope → 403, no 100', async () => {
    assertRefusedWithoutContinue(await expectingExchange(port, head('PUT', '/v1/webhooks', { ...json, ...as('acme:read-only') }), BODY), 403, 'insufficient_scope');
  });

  t.test('a declared length over the limit → 413, no 100', async () => {
    const raw = await expectingExchange(port, head('PUT', '/v1/webhooks', { ...as('beta:all'), 'content-type': 'application/json', 'content-length': '1000000' }), BODY);
    assertRefusedWithoutContinue(raw, 413, 'payload_too_large');
  });

  t.test('a body that is not JSON → 415, no 100', async () => {
    const raw = await expectingExchange(port, head('PUT', '/v1/webhooks', { ...as('acme:write:webhooks'), 'content-type': 'text/plain', 'content-length': '5' }), 'hello');
    assertRefusedWithoutContinue(raw, 415, 'unsupported_media_type');
  });

  t.test('a content-coded or non-UTF-8 JSON body → 415, no 100', async () => {
    const key = as('acme:all');
    assertRefusedWithoutContinue(await expectingExchange(port, head('PUT', '/v1/webhooks', { ...json, ...key, 'content-encoding': 'gzip' }), BODY), 415, 'unsupported_media_type');
    const latin1 = { ...json, 'content-type': 'application/json; charset=iso-8859-1' };
    assertRefusedWithoutContinue(await expectingExchange(port, head('PUT', '/v1/webhooks', { ...latin1, ...key }), BODY), 415, 'unsupported_media_type');
  });

  t.test('a key over its limit → 429, no 100', async (t) => {
    const limited = await buildTestGateway({ config: { rateLimits: { keyPerMinute: 60, keyBurst: 0 } } });
    t.teardown(() => limited.close());
    const port = Number(new URL(await limited.app.listen({ host: '127.0.0.1', port: 0 })).port);
    const key = { authorization: `Bearer ${limited.keys['acme:all']}` };
    // No burst: the first request spends what the key may send now, the second is refused.
    const first = await expectingExchange(port, head('PUT', '/v1/webhooks', { ...json, ...key, connection: 'close' }), BODY);
    assert.match(first, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /, first.slice(0, 300));
    assertRefusedWithoutContinue(await expectingExchange(port, head('PUT', '/v1/webhooks', { ...json, ...key }), BODY), 429, 'rate_limited');
  });

  t.test('an accepted request gets 100 Continue, then its answer once the body came', async () => {
    const raw = await expectingExchange(port, head('PUT', '/v1/webhooks', { ...json, ...as('beta:all'), connection: 'close' }), BODY);
    assert.match(raw, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /, raw.slice(0, 300));
    assert.deepEqual(JSON.parse(raw.slice(raw.lastIndexOf('\r\n\r\n') + 4)).url, null);
  });

  t.test('another expectation → 417 expectation_failed', async () => {
    const raw = await rawExchange(port, 'GET /v1/health HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nConnection: close\r\n\r\n');
    assert.match(raw, /^HTTP\/1\.1 417 /, raw.slice(0, 300));
    const requestId = /x-request-id: ([0-9a-f-]{36})/i.exec(raw)?.[1];
    const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    assert.deepEqual([body.reason, body.request_id], ['expectation_failed', requestId]);
  });
});
