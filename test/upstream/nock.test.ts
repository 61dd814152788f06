/**
 * Where nock can stand in for an upstream, on the Node this suite runs on (README, "Dependencies").
 * nock 15.0.0, the newest nock that runs on Node 20, intercepts `http.request` and the global
 * `fetch`; our upstream client sends through its own undici Pool, which opens its sockets itself, so
 * its requests pass nock by and reach the real server. (nock ≥ 15.0.1 intercepts sockets, Pools
 * included, but its interceptor library needs Node 22.) The mapping tests therefore script the
 * upstream with undici's MockAgent, injected as the client's dispatcher.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import nock from 'nock';
import t from 'tap';
import { createWhmcsClient } from '../../mappings/whmcs/client.js';
import { testConfig } from '../mappings/whmcs/fake-whmcs.js';

const received: string[] = [];
const server = createServer((request: IncomingMessage, response: ServerResponse) => {
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk.toString()));
  request.on('end', () => {
    received.push(new URLSearchParams(body).get('action') ?? '');
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ result: 'success', answeredBy: 'server' }));
  });
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const scope = nock(origin)
  .post('/whmcs/includes/api.php')
  .reply(200, { result: 'success', answeredBy: 'nock' }, { 'content-type': 'application/json' })
  .persist();

t.teardown(async () => {
  nock.cleanAll();
  nock.restore();
  server.close();
  await once(server, 'close');
});

t.test('nock answers a request sent with the global fetch', async (t) => {
  const response = await fetch(`${origin}/whmcs/includes/api.php`, { method: 'POST', body: 'action=GetCurrencies' });
  t.same(await response.json(), { result: 'success', answeredBy: 'nock' });
  t.ok(scope.isDone(), 'the nock scope was used');
  t.same(received, [], 'nothing reached the server');
});

t.test('our upstream client (an undici Pool) passes nock by and reaches the server', async (t) => {
  const client = createWhmcsClient(testConfig({ url: `${origin}/whmcs/` }));
  t.teardown(() => client.close());
  const answer = await client.call('GetCurrencies');
  t.equal(answer.answeredBy, 'server');
  t.same(received, ['GetCurrencies']);
});
