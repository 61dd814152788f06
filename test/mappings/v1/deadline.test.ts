/**
 * A request answered 504 for its deadline is never sent afterwards (src/upstream/deadline-dispatcher.ts):
 * with every connection taken by an upstream that hangs, the requests queued behind it time out
 * unsent, and the connection is freed at the deadline for the next request. Before, each went out
 * once a connection freed up, after its client had been told it timed out: a write among them too.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, ORDER, type PassthroughGateway } from './harness.js';

const TIMEOUT_MS = 300;
const WRITE_TIMEOUT_MS = 400;

t.test('v1 passthrough: deadlines with one connection to an upstream that hangs', async (t) => {
  let gw: PassthroughGateway;
  t.before(async () => {
    gw = await buildPassthroughGateway({ v1: { connections: 1, timeoutMs: TIMEOUT_MS, writeTimeoutMs: WRITE_TIMEOUT_MS } });
    // Hangs on service 7 and on orders; answers the balance at once.
    gw.upstream.answer((request, response) => {
      if (request.url.endsWith('/v1/billing/balance')) json(200, { credit: { amount: '0.00', currency: 'USD' } })(request, response, undefined as never);
    });
  });
  t.teardown(() => gw.close());
  const sent = (path: string, method = 'GET') => gw.upstream.received.filter((each) => each.method === method && each.url.endsWith(path)).length;

  t.test('reads queued behind a hanging one time out unsent; the connection serves the next request', async () => {
    const reads = await Promise.all(
      Array.from({ length: 5 }, () => gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:all']) })),
    );
    assert.deepEqual(reads.map((each) => each.statusCode), [504, 504, 504, 504, 504]);
    // Long enough for every queued one to have gone out, one deadline after another, had it been sent.
    await sleep(TIMEOUT_MS * 6);
    assert.equal(sent('/v1/services/7'), 1, 'only the read that held the connection reached the upstream');
    const balance = await gw.app.inject({ method: 'GET', url: '/v1/billing/balance', headers: bearer(gw.keys['acme:all']) });
    assert.equal(balance.statusCode, 200, balance.body);
  });

  t.test('a write that timed out waiting for a connection is never placed', async () => {
    const orders = await Promise.all(
      Array.from({ length: 3 }, () =>
        gw.app.inject({
          method: 'POST',
          url: '/v1/orders',
          headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': randomUUID() },
          payload: { product_id: ORDER.service_ids[0], billing_cycle: 'monthly' },
        }),
      ),
    );
    assert.deepEqual(orders.map((each) => each.statusCode), [504, 504, 504], orders.map((each) => each.body).join('\n'));
    await sleep(WRITE_TIMEOUT_MS * 5);
    assert.equal(sent('/v1/orders', 'POST'), 1, 'one order went out (its outcome unknown to the client, as the 504 says); the others never did');
  });
});
