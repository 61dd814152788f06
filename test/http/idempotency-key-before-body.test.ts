/**
 * An idempotent POST without a usable `Idempotency-Key` is refused on its headers alone (RFC 9110
 * §10.1.1: a final status that the head decides is sent instead of 100 Continue), so a client
 * waiting for 100 Continue never uploads a body only to learn the key was missing or malformed:
 * on the v1 POSTs and on the admin API's.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildAdminGateway, type AdminGateway } from '../admin/helpers.js';
import { expectingExchange } from '../helpers/http.js';

t.test('a missing or malformed Idempotency-Key is refused before 100 Continue', async (t) => {
  let gw: AdminGateway;
  let port: number;
  let opsPort: number;
  t.before(async () => {
    gw = await buildAdminGateway();
    port = Number(new URL(await gw.app.listen({ host: '127.0.0.1', port: 0 })).port);
    opsPort = Number(new URL(await gw.ops.listen({ host: '127.0.0.1', port: 0 })).port);
  });
  t.teardown(() => gw.close());
  const body = JSON.stringify({ action: 'reboot' });
  const head = (path: string, extra: string) =>
    `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.keys['acme:all']}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n${extra}\r\n`;

  for (const [label, extra, reason] of [
    ['no key', '', 'idempotency_key_missing'],
    ['a malformed key', 'Idempotency-Key: not a key!\r\n', 'idempotency_key_invalid'],
  ] as const) {
    for (const path of ['/v1/orders', '/v1/services/1/actions']) {
      t.test(`${label} on POST ${path} → 400 ${reason}, no 100`, async () => {
        const raw = await expectingExchange(port, head(path, extra), body);
        assert.ok(!raw.includes('100 Continue'), `a 100 Continue was sent before the refusal: ${raw.slice(0, 200)}`);
        assert.match(raw, /^HTTP\/1\.1 400 /, raw.slice(0, 300));
        assert.match(raw, /content-type: application\/problem\+json/i);
        const problem = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
        assert.equal(problem.reason, reason);
        assert.equal(problem.request_id, /x-request-id: ([0-9a-f-]{36})/i.exec(raw)?.[1]);
      });
    }
  }

  t.test('a good key still gets 100 Continue and its answer', async () => {
    const raw = await expectingExchange(port, head('/v1/services/1/actions', 'Idempotency-Key: "reboot-1"\r\n'), body);
    assert.match(raw, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 20\d /, raw.slice(0, 300));
  });

  t.test('the admin API refuses a missing Idempotency-Key before 100 Continue too', async () => {
    const keyRequest = JSON.stringify({ name: 'panel', scopes: ['read:products'] });
    const raw = await expectingExchange(
      opsPort,
      `POST /admin/v1/accounts/acme/keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.tokens.all?.token}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${keyRequest.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
      keyRequest,
    );
    assert.ok(!raw.includes('100 Continue'), `a 100 Continue was sent before the refusal: ${raw.slice(0, 200)}`);
    assert.match(raw, /^HTTP\/1\.1 400 /, raw.slice(0, 300));
    assert.equal(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).reason, 'idempotency_key_missing');
  });
});
