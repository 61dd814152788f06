/**
 * Two requests Node would answer on its own, bare (no X-Request-Id, no problem), on both listeners:
 * - an Expect other than 100-continue: Node writes a bare 417 itself unless a 'checkExpectation'
 *   listener is installed; the gateway answers its own 417 problem (RFC 9110 §10.1.1);
 * - an HTTP/1.1 request without Host (RFC 9112 §3.2: 400): refused by the gateway, as a problem.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { rawExchange } from '../helpers/http.js';
import { buildAdminGateway, type AdminGateway } from '../admin/helpers.js';

function assertProblem(raw: string, status: number, what: string): void {
  assert.match(raw, new RegExp(`^HTTP/1\\.1 ${status} `), `${what}: ${raw}`);
  assert.match(raw, /content-type: application\/problem\+json/i, `${what}: ${raw}`);
  const requestId = /x-request-id: ([0-9a-f-]{36})/i.exec(raw)?.[1];
  assert.ok(requestId, `${what}: no X-Request-Id in ${JSON.stringify(raw)}`);
  const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
  assert.equal(body.request_id, requestId, what);
}

t.test('requests Node answers on its own are problems with a request id', async (t) => {
  let gw: AdminGateway;
  let v1Port: number;
  let opsPort: number;
  t.before(async () => {
    gw = await buildAdminGateway();
    v1Port = Number(new URL(await gw.app.listen({ host: '127.0.0.1', port: 0 })).port);
    opsPort = Number(new URL(await gw.ops.listen({ host: '127.0.0.1', port: 0 })).port);
  });
  t.teardown(() => gw.close());

  t.test('Expect: an unknown expectation → 417 problem (public listener)', async () => {
    const raw = await rawExchange(v1Port, 'GET /v1/health HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nConnection: close\r\n\r\n');
    assertProblem(raw, 417, 'v1 Expect: 200-ok');
  });

  t.test('no Host header → 400 problem (public listener)', async () => {
    const raw = await rawExchange(v1Port, 'GET /v1/health HTTP/1.1\r\nConnection: close\r\n\r\n');
    assertProblem(raw, 400, 'v1 without Host');
  });

  t.test('the same on the admin API (ops listener)', async () => {
    const auth = `Authorization: Bearer ${gw.tokens.all?.token}\r\n`;
    assertProblem(await rawExchange(opsPort, `GET /admin/v1/accounts HTTP/1.1\r\nHost: x\r\n${auth}Expect: 200-ok\r\nConnection: close\r\n\r\n`), 417, 'admin Expect');
    assertProblem(await rawExchange(opsPort, `GET /admin/v1/accounts HTTP/1.1\r\n${auth}Connection: close\r\n\r\n`), 400, 'admin without Host');
  });
});
