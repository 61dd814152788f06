/**
 * The passthrough's circuit breaker (mappings/v1/breaker.ts): after `failureThreshold` down-signals
 * in a row the gateway answers 503 at once and sends nothing; after `openMs` one call goes through
 * (a write waits for the health probe instead), and an answer closes the breaker. The upstream's
 * own refusals (a 404, a 422) are answers, never down-signals.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, problem, SERVICE, ORDER, type PassthroughGateway } from './harness.js';

const OPEN_MS = 300;

t.test('v1 passthrough: circuit breaker', async (t) => {
  let gw: PassthroughGateway;
  t.beforeEach(async () => {
    gw = await buildPassthroughGateway({ v1: { circuitBreaker: { failureThreshold: 2, openMs: OPEN_MS } } });
  });
  t.afterEach(() => gw.close());

  const read = () => gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:all']) });
  const order = (key: string) =>
    gw.app.inject({ method: 'POST', url: '/v1/orders', headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': key }, payload: { product_id: '1', billing_cycle: 'monthly' } });
  /** Two plain 503s from an overloaded upstream: the breaker opens. */
  const open = async () => {
    gw.upstream.answer(json(503, { error: 'overloaded' }));
    assert.deepEqual([(await read()).statusCode, (await read()).statusCode], [503, 503]);
  };

  t.test('open: 503 upstream_unavailable at once with Retry-After, nothing sent; a read after openMs closes it', async () => {
    await open();
    const sent = gw.upstream.received.length;
    const refused = await read();
    assert.equal(refused.statusCode, 503);
    assert.equal(refused.json().reason, 'upstream_unavailable');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.equal(gw.upstream.received.length, sent, 'nothing reached the upstream');
    assert.ok(gw.logs.some((line) => /v1 upstream circuit breaker opened/.test(line)));

    gw.upstream.answer(json(200, SERVICE));
    await sleep(OPEN_MS + 50);
    assert.equal((await read()).statusCode, 200, 'the trial read went through');
    assert.equal((await read()).statusCode, 200, 'closed again');
    assert.equal(gw.upstream.received.length, sent + 2);
  });

  t.test("the breaker's log lines name the trace of the request that moved it", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const traced = () => gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: { ...bearer(gw.keys['acme:all']), traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
    gw.upstream.answer(json(503, { error: 'overloaded' }));
    await read();
    assert.equal((await traced()).statusCode, 503);
    const opened = gw.logs.find((line) => /v1 upstream circuit breaker opened/.test(line));
    assert.ok(opened);
    assert.equal(JSON.parse(opened).trace_id, traceId, opened);
    assert.equal((opened.match(/"trace_id"/g) ?? []).length, 1, 'once');
  });

  t.test('a write refused while open is known not to have run: retried with its key after recovery, it is sent once', async () => {
    await open();
    const refused = await order('breaker-order-1');
    assert.equal(refused.statusCode, 503, refused.body);
    assert.equal(refused.json().reason, 'upstream_unavailable');
    assert.equal(gw.upstream.received.filter((request) => request.method === 'POST').length, 0);

    gw.upstream.answer((request, response, socket) => (request.method === 'POST' ? json(201, ORDER) : json(200, SERVICE))(request, response, socket));
    await sleep(OPEN_MS + 50);
    // The first call after openMs is this write: the health probe is the trial, not the write.
    const placed = await order('breaker-order-1');
    assert.equal(placed.statusCode, 201, placed.body);
    assert.equal(placed.headers['idempotent-replayed'], undefined, 'sent now, not a replay of the refusal');
    assert.equal(gw.upstream.received.filter((request) => request.method === 'POST').length, 1);
  });

  t.test('a write after openMs against an upstream still down is not sent: the probe fails first', async () => {
    await open();
    await sleep(OPEN_MS + 50);
    const refused = await order('breaker-order-2');
    assert.equal(refused.statusCode, 503, refused.body);
    assert.equal(gw.upstream.received.filter((request) => request.method === 'POST').length, 0);
  });

  t.test("one account past its upstream key's limit (429) does not open it for the others", async () => {
    gw.upstream.answer(problem(429, 'rate_limited', { violated_policies: ['key_minute'] }, { 'retry-after': '7' }));
    for (let i = 0; i < 5; i += 1) assert.equal((await read()).statusCode, 503);
    gw.upstream.answer(json(200, SERVICE));
    const other = await gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['beta:all']) });
    assert.equal(other.statusCode, 200, other.body);
  });

  t.test("the upstream's own refusals are answers: many 404s and 422s never open it", async () => {
    gw.upstream.answer(problem(404, 'not_found'));
    for (let i = 0; i < 5; i += 1) assert.equal((await read()).statusCode, 404);
    gw.upstream.answer(problem(422, 'validation_failed', { errors: [{ pointer: '/product_id', detail: 'unknown' }] }));
    for (let i = 0; i < 5; i += 1) assert.equal((await order(`refused-${i}`)).statusCode, 422);
    gw.upstream.answer(json(200, SERVICE));
    const sent = gw.upstream.received.length;
    assert.equal((await read()).statusCode, 200);
    assert.equal(gw.upstream.received.length, sent + 1);
  });

  t.test("a 502 problem the upstream wrote (one record its backend could not give) is an answer; a proxy's 502 page is a down-signal", async () => {
    gw.upstream.answer(problem(502, 'upstream_error'));
    for (let i = 0; i < 5; i += 1) assert.equal((await read()).statusCode, 502);
    gw.upstream.answer(json(200, SERVICE));
    const sent = gw.upstream.received.length;
    assert.equal((await read()).statusCode, 200, 'still closed');
    assert.equal(gw.upstream.received.length, sent + 1);

    gw.upstream.answer((_request, response) => {
      response.writeHead(502, { 'content-type': 'text/html' });
      response.end('<html><body>502 Bad Gateway</body></html>');
    });
    assert.deepEqual([(await read()).statusCode, (await read()).statusCode], [502, 502]);
    const before = gw.upstream.received.length;
    assert.equal((await read()).statusCode, 503, 'open');
    assert.equal(gw.upstream.received.length, before, 'nothing sent');
  });

  t.test('readiness asks through the breaker: down at once while it is open, nothing sent', async () => {
    await open();
    const probes: string[] = [];
    gw.upstream.answer((request, response, socket) => {
      probes.push(request.url);
      json(200, { status: 'ok' })(request, response, socket);
    });
    const health = await gw.app.inject({ method: 'GET', url: '/v1/health' });
    assert.equal(health.statusCode, 503);
    assert.equal(health.json().reason, 'upstream_unavailable');
    assert.deepEqual(probes, [], 'no probe while open');
    // Past openMs and past /v1/health's one-second memo of its last check.
    await sleep(Math.max(OPEN_MS, 1_000) + 50);
    assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/health' })).statusCode, 200, 'the probe after openMs is the trial');
    assert.deepEqual(probes, ['/v1/health']);
    gw.upstream.answer(json(200, SERVICE));
    assert.equal((await read()).statusCode, 200, 'the answered probe closed it');
  });
});
