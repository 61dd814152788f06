/**
 * A client that gives up while the gateway waits on the upstream (its own timeout, a closed tab)
 * still gets its access line and its count: Fastify's onResponse never runs for it (the response
 * never finishes), so these requests, the ones a slow upstream causes, were in neither the log nor
 * gateway_http_requests_total. They are counted as 499 (nginx's "client closed request").
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import t from 'tap';
import { buildTestGateway } from '../helpers/gateway.js';
import { startWhmcsSimulator } from '../../simulators/whmcs/server.js';
import { buildPassthroughGateway, json, SERVICE } from '../mappings/v1/harness.js';

/** Sends a GET and closes the connection `afterMs` later, before any answer. */
function abortAfter(url: string, key: string, afterMs: number): Promise<void> {
  return new Promise((resolve) => {
    const req = request(url, { headers: { authorization: `Bearer ${key}` } });
    req.on('error', () => undefined);
    req.end();
    setTimeout(() => {
      req.destroy();
      resolve();
    }, afterMs);
  });
}

t.test('a request the client aborts is logged once and counted once, as 499', async (t) => {
  const simulator = await startWhmcsSimulator({ latencyMs: 400 });
  const gw = await buildTestGateway({ simulator });
  t.teardown(async () => {
    await gw.close();
    await simulator.close();
  });
  const address = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  await abortAfter(`${address}/v1/services?page=1`, gw.keys['acme:all'] as string, 100);
  // Past the upstream's answer, which has nowhere to go.
  await new Promise((resolve) => setTimeout(resolve, 1_000));

  const lines = gw.logs.map((line) => JSON.parse(line) as Record<string, any>).filter((line) => line.req?.url?.startsWith('/v1/services'));
  assert.equal(lines.length, 1, gw.logs.join(''));
  const [line] = lines as [Record<string, any>];
  assert.equal(line.level, 30);
  assert.equal(line.res.statusCode, 499);
  assert.equal(line.req.url, '/v1/services?page=1');
  assert.match(line.request_id, /^[0-9a-f-]{36}$/);
  assert.match(line.trace_id, /^[0-9a-f]{32}$/);
  assert.ok(line.responseTime >= 50 && line.responseTime < 400, String(line.responseTime));

  const exposition = await gw.app.metrics.registry.metrics();
  const counted = exposition.split('\n').filter((each) => each.startsWith('gateway_http_requests_total{'));
  assert.deepEqual(counted, ['gateway_http_requests_total{route="/v1/services",method="GET",status="499"} 1']);
});

t.test('the v1 passthrough: an aborted forwarded request is logged and counted once too', async (t) => {
  const gw = await buildPassthroughGateway();
  t.teardown(() => gw.close());
  // The upstream answers after the client has gone.
  gw.upstream.answer((_request, response) => setTimeout(() => json(200, SERVICE)(_request, response, response.socket as never), 300));
  const address = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  await abortAfter(`${address}/v1/services/${SERVICE.id}`, gw.keys['acme:all'] as string, 100);
  await new Promise((resolve) => setTimeout(resolve, 800));

  const lines = gw.logs.map((line) => JSON.parse(line) as Record<string, any>).filter((line) => line.req?.url?.startsWith('/v1/services'));
  assert.equal(lines.length, 1, gw.logs.join(''));
  assert.equal(lines[0]?.res.statusCode, 499);
  const exposition = await gw.app.metrics.registry.metrics();
  assert.deepEqual(
    exposition.split('\n').filter((each) => each.startsWith('gateway_http_requests_total{')),
    ['gateway_http_requests_total{route="/v1/services/:id",method="GET",status="499"} 1'],
  );
});
