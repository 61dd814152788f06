/**
 * On the ops listener (the admin API's), a request the request timeout cuts off before its answer
 * started was closed unanswered, where the public listener answers 408 `request_timeout` with
 * `Connection: close` (test/http/request-timeout-answered.test.ts): an admin client saw a reset
 * it could not tell from a crash. It is answered the same way, as an admin problem, and counted.
 *
 * Node's check runs every 30 s; the tests report the timeout as Node's onRequestTimeout does.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import t from 'tap';
import { buildAdminGateway, type AdminGateway } from '../admin/helpers.js';
import { parseAnswer, rawConnection, timeOut } from '../helpers/request-timeout.js';
import { waitFor } from '../helpers/wait.js';

const counted = async (gw: AdminGateway, status: number): Promise<string[]> =>
  (await gw.ops.inject({ method: 'GET', url: '/metrics' })).body.split('\n').filter((line) => line.startsWith('gateway_ops_requests_total{') && line.includes(`status="${status}"`));

const createAccount = (gw: AdminGateway) =>
  `POST /admin/v1/accounts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.tokens.all?.token}\r\nIdempotency-Key: k-1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"id":`;

t.test('an admin body timed out before any answer → 408 request_timeout problem, Connection: close; counted 408 once', async (t) => {
  const gw = await buildAdminGateway();
  t.teardown(() => gw.close());
  let serverSide: Socket | undefined;
  gw.ops.server.on('request', (request) => (serverSide = request.socket));
  const { client, closed, received } = await rawConnection(gw.ops);
  client.write(createAccount(gw));
  const socket = await waitFor(() => serverSide, 3000, 'the request to be routed');
  await new Promise((resolve) => setImmediate(resolve));
  timeOut(gw.ops, socket);
  await closed;

  const answer = parseAnswer(received());
  assert.equal(answer.status, 'HTTP/1.1 408 Request Timeout');
  assert.match(answer.headers, /\r\nconnection: close\r\n/);
  assert.match(answer.headers, /\r\ncontent-type: application\/problem\+json; charset=utf-8\r\n/);
  assert.deepEqual([answer.body.reason, answer.body.title, answer.body.status], ['request_timeout', 'Request timeout', 408]);
  assert.match(answer.headers, new RegExp(`\r\nx-request-id: ${String(answer.body.request_id)}\r\n`));
  await waitFor(async () => ((await counted(gw, 408)).length > 0 ? true : undefined), 3000, 'the request to be counted');
  assert.deepEqual(await counted(gw, 408), ['gateway_ops_requests_total{route="/admin/v1/accounts",method="POST",status="408"} 1']);
});

t.test('a head timed out on the ops listener → 408 request_timeout problem, counted unmatched', async (t) => {
  const gw = await buildAdminGateway();
  t.teardown(() => gw.close());
  let serverSide: Socket | undefined;
  gw.ops.server.on('connection', (socket) => (serverSide = socket));
  const { client, closed, received } = await rawConnection(gw.ops);
  client.write('GET /admin/v1/acc');
  const socket = await waitFor(() => serverSide, 3000, 'the connection');
  await new Promise((resolve) => setTimeout(resolve, 20));
  timeOut(gw.ops, socket);
  await closed;

  const answer = parseAnswer(received());
  assert.equal(answer.status, 'HTTP/1.1 408 Request Timeout');
  assert.match(answer.headers, /\r\nconnection: close\r\n/);
  assert.equal(answer.body.reason, 'request_timeout');
  assert.match(answer.headers, new RegExp(`\r\nx-request-id: ${String(answer.body.request_id)}\r\n`));
  assert.deepEqual(await counted(gw, 408), ['gateway_ops_requests_total{route="unmatched",method="unknown",status="408"} 1']);
});

t.test('an admin request whose answer has started is closed without a second answer', async (t) => {
  const gw = await buildAdminGateway();
  t.teardown(() => gw.close());
  let serverSide: { socket: Socket; response: ServerResponse } | undefined;
  gw.ops.server.on('request', (request, response) => (serverSide = { socket: request.socket, response }));
  const { client, closed, received } = await rawConnection(gw.ops);
  client.write(createAccount(gw));
  const { socket, response } = await waitFor(() => serverSide, 3000, 'the request to be routed');
  await new Promise((resolve) => setImmediate(resolve));
  response.flushHeaders();
  await waitFor(() => (received() !== '' ? true : undefined), 3000, 'the answer to start');
  timeOut(gw.ops, socket);
  await closed;

  assert.doesNotMatch(received(), /408/, 'no 408 written into the started answer');
});
