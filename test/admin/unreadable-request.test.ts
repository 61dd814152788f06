/**
 * The ops listener, which serves the admin API, answers a request Node cannot parse (oversized
 * headers) as a problem with a request id, as the public listener does: 431 `headers_too_large`,
 * not Node's bare 431.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { rawExchange } from '../helpers/http.js';
import { buildAdminGateway } from './helpers.js';

t.test('admin API: a request with oversized headers is a problem', async (t) => {
  const gw = await buildAdminGateway();
  t.teardown(() => gw.close());
  const port = Number(new URL(await gw.ops.listen({ host: '127.0.0.1', port: 0 })).port);
  const raw = await rawExchange(port, `GET /admin/v1/accounts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.tokens.all?.token}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  assert.match(raw, /^HTTP\/1\.1 431 /);
  assert.match(raw, /content-type: application\/problem\+json/i);
  const requestId = /x-request-id: ([0-9a-f-]{36})/i.exec(raw)?.[1];
  assert.ok(requestId, raw);
  const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
  assert.deepEqual([body.reason, body.detail, body.request_id], ['headers_too_large', 'The request line and header fields together are larger than the gateway reads (16384 bytes).', requestId]);
});
