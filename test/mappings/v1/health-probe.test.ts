/**
 * The passthrough's health probe (the breaker's trial, and the probe a write waits for in
 * half-open) has one deadline for its whole answer: a /v1/health whose body drips in must not hold
 * the trial (the breaker stuck half-open, every call 503) nor a write waiting for the probe past
 * its own deadline.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, ORDER, SERVICE } from './harness.js';

const OPEN_MS = 300;

t.test('v1 passthrough: a health probe whose body drips in counts as down within its 2 s', async (t) => {
  const gw = await buildPassthroughGateway({ v1: { circuitBreaker: { failureThreshold: 2, openMs: OPEN_MS } } });
  t.teardown(() => gw.close());
  const read = () => gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:all']) });

  gw.upstream.answer(json(503, { error: 'overloaded' }));
  assert.deepEqual([(await read()).statusCode, (await read()).statusCode], [503, 503], 'open');

  const drips: NodeJS.Timeout[] = [];
  t.teardown(() => drips.forEach(clearInterval));
  gw.upstream.answer((request, response, socket) => {
    if (request.url !== '/v1/health') return (request.method === 'POST' ? json(201, ORDER) : json(200, SERVICE))(request, response, socket);
    response.writeHead(200, { 'content-type': 'application/json' });
    // A byte every 200 ms: never idle for undici's bodyTimeout (2 s), never done.
    drips.push(setInterval(() => (response.destroyed ? undefined : response.write(' ')), 200));
  });
  await sleep(OPEN_MS + 50);

  // The first call after openMs is a write: the health probe goes first.
  const started = Date.now();
  const placed = await Promise.race([
    gw.app.inject({ method: 'POST', url: '/v1/orders', headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': 'drip-1' }, payload: { product_id: '1', billing_cycle: 'monthly' } }),
    sleep(6_000).then(() => undefined),
  ]);
  assert.ok(placed, `the write was still waiting for the probe after ${Date.now() - started} ms (its deadline is 700 ms)`);
  assert.equal(placed.statusCode, 503, 'the probe was not answered in time: the write is refused, not sent');

  // The probe counted as down; after openMs the next read is the trial, and goes through.
  await sleep(OPEN_MS + 50);
  assert.equal((await read()).statusCode, 200, 'the breaker is not stuck half-open');
});
