/**
 * A request cut off by Node's request timeout (ERR_HTTP_REQUEST_TIMEOUT: the body, or the head,
 * did not arrive in time) is answered 408 `request_timeout` with `Connection: close` when nothing
 * of its answer was written yet (RFC 9110 §15.5.9), as Node itself would: a stalled uploader then
 * tells the timeout from a crash. Once the answer has started, the connection is closed as before.
 *
 * Node's check runs every 30 s; the tests report the timeout as Node's onRequestTimeout does.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import t from 'tap';
import { buildTestGateway, type TestGateway } from '../helpers/gateway.js';
import { parseAnswer, rawConnection, timeOut } from '../helpers/request-timeout.js';
import { waitFor } from '../helpers/wait.js';

const counted = async (gw: TestGateway, status: number): Promise<string[]> =>
  (await gw.app.metrics.registry.getSingleMetricAsString('gateway_http_requests_total')).split('\n').filter((line) => line.includes(`status="${status}"`));

t.test('a body timed out before any answer → 408 request_timeout, Connection: close; still counted 408 once', async (t) => {
  const gw = await buildTestGateway();
  t.teardown(() => gw.close());
  let serverSide: Socket | undefined;
  gw.app.server.on('request', (request) => (serverSide = request.socket));
  const { client, closed, received } = await rawConnection(gw.app);
  client.write(`PUT /v1/webhooks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.keys['acme:all']}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"url":`);
  const socket = await waitFor(() => serverSide, 3000, 'the request to be routed');
  await new Promise((resolve) => setImmediate(resolve));
  timeOut(gw.app, socket);
  await closed;

  const answer = parseAnswer(received());
  assert.equal(answer.status, 'HTTP/1.1 408 Request Timeout');
  assert.match(answer.headers, /\r\nconnection: close\r\n/);
  assert.match(answer.headers, /\r\ncontent-type: application\/problem\+json; charset=utf-8\r\n/);
  assert.equal(answer.body.reason, 'request_timeout');
  assert.equal(answer.body.title, 'Request timeout');
  assert.equal(answer.body.status, 408);
  await waitFor(async () => ((await counted(gw, 408)).length > 0 ? true : undefined), 3000, 'the request to be counted');
  assert.deepEqual(await counted(gw, 408), ['gateway_http_requests_total{route="/v1/webhooks",method="PUT",status="408"} 1']);
  const line = gw.logs.map((each) => JSON.parse(each)).find((each) => each.res?.statusCode === 408);
  assert.equal(line?.request_id ?? line?.reqId, answer.body.request_id, 'the answer names the request id of its log line');
});

t.test('a head timed out (headers timeout) → 408 request_timeout, counted unmatched', async (t) => {
  const gw = await buildTestGateway();
  t.teardown(() => gw.close());
  let serverSide: Socket | undefined;
  gw.app.server.on('connection', (socket) => (serverSide = socket));
  const { client, closed, received } = await rawConnection(gw.app);
  client.write(`GET /v1/serv`);
  const socket = await waitFor(() => serverSide, 3000, 'the connection');
  await new Promise((resolve) => setTimeout(resolve, 20));
  timeOut(gw.app, socket);
  await closed;

  const answer = parseAnswer(received());
  assert.equal(answer.status, 'HTTP/1.1 408 Request Timeout');
  assert.match(answer.headers, /\r\nconnection: close\r\n/);
  assert.equal(answer.body.reason, 'request_timeout');
  assert.match(answer.headers, new RegExp(`\r\nx-request-id: ${String(answer.body.request_id)}\r\n`));
  assert.deepEqual(await counted(gw, 408), ['gateway_http_requests_total{route="unmatched",method="unknown",status="408"} 1']);
});

t.test('a request whose answer has started is closed without a second answer', async (t) => {
  const gw = await buildTestGateway();
  t.teardown(() => gw.close());
  let serverSide: { socket: Socket; response: ServerResponse } | undefined;
  gw.app.server.on('request', (request, response) => (serverSide = { socket: request.socket, response }));
  const { client, closed, received } = await rawConnection(gw.app);
  client.write(`PUT /v1/webhooks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.keys['acme:all']}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"url":`);
  const { socket, response } = await waitFor(() => serverSide, 3000, 'the request to be routed');
  await new Promise((resolve) => setImmediate(resolve));
  response.flushHeaders();
  await waitFor(() => (received() !== '' ? true : undefined), 3000, 'the answer to start');
  timeOut(gw.app, socket);
  await closed;

  assert.doesNotMatch(received(), /408/, 'no 408 written into the started answer');
  await waitFor(async () => ((await counted(gw, 408)).length > 0 ? true : undefined), 3000, 'the request to be counted');
  assert.deepEqual(await counted(gw, 408), ['gateway_http_requests_total{route="/v1/webhooks",method="PUT",status="408"} 1']);
});
