/**
 * `Expect: 100-continue` with a JSON body declared US-ASCII (UTF-8's subset, accepted when its bytes
 * are ASCII): the headers alone cannot refuse it, so the client gets its 100 Continue and then its
 * answer. The charset and the expectation are case-insensitive (RFC 9110 §8.3.2, §10.1.1).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildTestGateway } from '../helpers/gateway.js';
import { expectingExchange } from '../helpers/http.js';

const BODY = JSON.stringify({ url: null });

t.test('a US-ASCII JSON body awaiting 100 Continue gets it, then its answer', async (t) => {
  const gw = await buildTestGateway();
  t.teardown(() => gw.close());
  const port = Number(new URL(await gw.app.listen({ host: '127.0.0.1', port: 0 })).port);
  for (const [expect, charset] of [['100-continue', 'us-ascii'], ['100-Continue', 'US-ASCII']]) {
    const head =
      `PUT /v1/webhooks HTTP/1.1\r\nHost: x\r\nExpect: ${expect}\r\nAuthorization: Bearer ${gw.keys['beta:all']}\r\n` +
      `Content-Type: application/json; charset=${charset}\r\nContent-Length: ${BODY.length}\r\nConnection: close\r\n\r\n`;
    const raw = await expectingExchange(port, head, BODY);
    assert.match(raw, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /, `${expect}, ${charset}: ${raw.slice(0, 300)}`);
  }
});
