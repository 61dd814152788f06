/**
 * Requests the HTTP parser refuses (414, 431, 400) are answered by the gateway itself, before any
 * route: they are counted in `gateway_http_requests_total` (route `unmatched`) like every other
 * answered request. A client that closes its connection in the middle of a body is one request
 * aborted (499), not also a parser refusal answered on a connection whose answer was still owed.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import t from 'tap';
import { rawExchange } from '../helpers/http.js';
import { buildTestGateway, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';

t.test('parser refusals are counted; an abort mid-body is one 499', async (t) => {
  let gw: TestGateway;
  let port: number;
  t.before(async () => {
    gw = await buildTestGateway();
    port = Number(new URL(await gw.app.listen({ host: '127.0.0.1', port: 0 })).port);
  });
  t.teardown(() => gw.close());
  const counted = async (status: number): Promise<string[]> =>
    (await gw.app.metrics.registry.getSingleMetricAsString('gateway_http_requests_total')).split('\n').filter((line) => line.includes(`status="${status}"`));

  t.test('a 414 and a 431 of the parser are counted as unmatched requests', async () => {
    const long = await rawExchange(port, `GET /v1/services?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.match(long, /^HTTP\/1\.1 414 /);
    const big = await rawExchange(port, `GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`);
    assert.match(big, /^HTTP\/1\.1 431 /);
    // The method is the request line's when the packet the parser failed in starts with it.
    assert.match((await counted(414)).join('\n'), /^gateway_http_requests_total\{route="unmatched",method="(GET|unknown)",status="414"\} 1$/);
    assert.match((await counted(431)).join('\n'), /^gateway_http_requests_total\{route="unmatched",method="(GET|unknown)",status="431"\} 1$/);
  });

  t.test('a client that closes in the middle of its body: one 499, no parser refusal', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`PUT /v1/webhooks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.keys['acme:all']}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"url":`);
    // The request is routed (a request event per head read) before the client goes away.
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.end();
    await waitFor(async () => ((await counted(499)).length > 0 ? true : undefined), 3000, 'the 499');
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(await counted(499), ['gateway_http_requests_total{route="/v1/webhooks",method="PUT",status="499"} 1']);
    assert.deepEqual(await counted(400), []);
    assert.deepEqual(gw.logs.filter((line) => line.includes('request refused by the HTTP parser') && line.includes('"status":400')), []);
  });
});
