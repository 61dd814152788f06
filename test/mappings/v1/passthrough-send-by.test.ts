/**
 * A forwarded write that waited for a connection is not sent once too little of the request's
 * deadline is left (as the mapped backends' calls: ExchangeRequest.sendBy): it ends 504 with its
 * Idempotency-Key free. Before, it went out with a few hundred ms left, was cut before its answer,
 * and held the key as an unknown outcome though the client had been told it timed out.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, ORDER } from './harness.js';

t.test('v1 passthrough: a queued write with under a second of its request left is not sent', async (t) => {
  const gw = await buildPassthroughGateway({
    config: { requestDeadlineMs: 2_000 },
    v1: { connections: 1, timeoutMs: 5_000, writeTimeoutMs: 5_000, circuitBreaker: { enabled: false } },
  });
  t.teardown(() => gw.close());
  // The read holds the one connection 1.6 s; an order is answered after 1 s.
  gw.upstream.answer((request, response, socket) => {
    const delay = request.method === 'GET' ? 1_600 : 1_000;
    setTimeout(() => json(request.method === 'GET' ? 200 : 201, request.method === 'GET' ? {} : ORDER)(request, response, socket), delay);
  });
  const order = () =>
    gw.app.inject({
      method: 'POST',
      url: '/v1/orders',
      headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json', 'idempotency-key': 'queued-send-by-1' },
      payload: { product_id: '1', billing_cycle: 'monthly' },
    });

  const [, queued] = await Promise.all([gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:all']) }), order()]);
  assert.equal(queued.statusCode, 504, queued.body);
  assert.equal(gw.upstream.received.filter((request) => request.method === 'POST').length, 0, 'the order was sent with too little time left');
  gw.upstream.answer(json(201, ORDER));
  const retry = await order();
  assert.equal(retry.statusCode, 201, `the retry with the same key: ${retry.body}`);
});

t.test('v1 passthrough: a write that timed out waiting for a connection leaves its key free', async (t) => {
  // The request's deadline (120 s) is far off: the write's own timeout (700 ms) ends it, still queued.
  const gw = await buildPassthroughGateway({ v1: { connections: 1, timeoutMs: 5_000, writeTimeoutMs: 700, circuitBreaker: { enabled: false } } });
  t.teardown(() => gw.close());
  gw.upstream.answer((request, response, socket) => {
    if (request.method === 'GET') setTimeout(() => json(200, {})(request, response, socket), 1_200);
    else json(201, ORDER)(request, response, socket);
  });
  const order = () =>
    gw.app.inject({
      method: 'POST',
      url: '/v1/orders',
      headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json', 'idempotency-key': 'queued-own-timeout-1' },
      payload: { product_id: '1', billing_cycle: 'monthly' },
    });

  const [, queued] = await Promise.all([gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:all']) }), order()]);
  assert.equal(queued.statusCode, 504, queued.body);
  assert.equal(gw.upstream.received.filter((request) => request.method === 'POST').length, 0, 'never sent');
  const retry = await order();
  assert.equal(retry.statusCode, 201, `the retry with the same key: ${retry.body}`);
});
