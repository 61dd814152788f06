/**
 * A request whose body does not arrive within the request timeout (30 s, `requestTimeout`) is cut
 * off by the gateway: Node reports ERR_HTTP_REQUEST_TIMEOUT to the clientError handler, which
 * closes the connection (since answering it 408 first). It was logged as "request
 * aborted by the client" and counted 499, as if the client had gone away: a slow uploader looked
 * like an impatient one. It is the server's timeout: counted and logged 408 (nginx's practice for
 * client_body_timeout), once.
 *
 * Node's check runs every 30 s (`connectionsCheckingInterval`); the test reports the timeout to the
 * server as Node's onRequestTimeout does, on the connection of a request in the middle of its body.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import t from 'tap';
import { buildTestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';

t.test('a body timed out is counted and logged 408, not 499', async (t) => {
  const gw = await buildTestGateway();
  t.teardown(() => gw.close());
  const port = Number(new URL(await gw.app.listen({ host: '127.0.0.1', port: 0 })).port);
  let serverSide: Socket | undefined;
  gw.app.server.on('request', (request) => (serverSide = request.socket));
  const counted = async (status: number): Promise<string[]> =>
    (await gw.app.metrics.registry.getSingleMetricAsString('gateway_http_requests_total')).split('\n').filter((line) => line.includes(`status="${status}"`));

  const client = connect(port, '127.0.0.1');
  await new Promise((resolve) => client.once('connect', resolve));
  let received = '';
  client.on('data', (chunk) => (received += String(chunk)));
  const closed = new Promise((resolve) => client.once('close', resolve));
  client.write(`PUT /v1/webhooks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.keys['acme:all']}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"url":`);
  const socket = await waitFor(() => serverSide, 3000, 'the request to be routed');
  // After the request's own hooks: the request is in flight, its body being read.
  await new Promise((resolve) => setImmediate(resolve));
  gw.app.server.emit('clientError', Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket);
  await closed;

  assert.match(received, /^HTTP\/1\.1 408 /, 'the client is answered 408, then the connection is closed');
  await waitFor(async () => ((await counted(408)).length + (await counted(499)).length > 0 ? true : undefined), 3000, 'the request to be counted');
  assert.deepEqual(await counted(499), [], 'not counted as aborted by the client');
  assert.deepEqual(await counted(408), ['gateway_http_requests_total{route="/v1/webhooks",method="PUT",status="408"} 1']);
  const line = gw.logs.map((each) => JSON.parse(each)).find((each) => each.res?.statusCode === 408);
  assert.ok(line, 'an access line with status 408');
  assert.doesNotMatch(line.msg, /aborted by the client/);
});
