/**
 * A request answered 504 for its deadline is never sent afterwards (src/upstream/deadline-dispatcher.ts):
 * with every connection taken by an upstream that hangs, the requests queued behind it time out
 * unsent (or go out while still within their own deadline), and the connection is freed at the
 * deadline for the next request. Before, each went out once a connection freed up, after its client
 * had been told it timed out: a write among them too.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, ORDER, type PassthroughGateway } from './harness.js';

const TIMEOUT_MS = 300;
const WRITE_TIMEOUT_MS = 400;
/** How long a request sent just before its deadline may take to reach the upstream, on a loaded host. */
const IN_TRANSIT_MS = 100;

t.test('v1 passthrough: deadlines with one connection to an upstream that hangs', async (t) => {
  let gw: PassthroughGateway;
  /** When the upstream received each request, by this gateway's request id. */
  const receivedAt = new Map<string, number>();
  t.before(async () => {
    // The breaker off: these timeouts would open it, and its fast 503s are another test's (breaker.test.ts).
    gw = await buildPassthroughGateway({ v1: { connections: 1, timeoutMs: TIMEOUT_MS, writeTimeoutMs: WRITE_TIMEOUT_MS, circuitBreaker: { enabled: false } } });
    // Hangs on service 7 and on orders; answers the balance at once.
    gw.upstream.answer((request, response, socket) => {
      receivedAt.set(String(request.headers['x-request-id']), Date.now());
      if (request.url.endsWith('/v1/billing/balance')) json(200, { credit: { amount: '0.00', currency: 'USD' } })(request, response, socket);
    });
  });
  t.teardown(() => gw.close());

  /** Sends them all at once; each answer with when it came. */
  const all = (requests: Array<() => Promise<LightMyRequestResponse>>) =>
    Promise.all(requests.map((send) => send().then((response) => ({ response, answeredAt: Date.now() }))));

  /**
   * None reached the upstream after its client had its answer (give or take the time one sent just
   * before its deadline takes to arrive: before the fix they arrived deadlines later); at least one
   * (the first) reached it.
   */
  const neverAfterTheAnswer = (answers: Array<{ response: LightMyRequestResponse; answeredAt: number }>) => {
    const reached = answers.filter(({ response }) => receivedAt.has(String(response.headers['x-request-id'])));
    assert.ok(reached.length >= 1, 'the first one held the connection');
    for (const { response, answeredAt } of reached) {
      const at = receivedAt.get(String(response.headers['x-request-id'])) as number;
      assert.ok(at <= answeredAt + IN_TRANSIT_MS, `request ${response.headers['x-request-id']} reached the upstream ${at - answeredAt} ms after its 504`);
    }
  };

  t.test('reads queued behind a hanging one are never sent after their 504; the connection serves the next request', async () => {
    const answers = await all(Array.from({ length: 5 }, () => () => gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:all']) })));
    assert.deepEqual(answers.map(({ response }) => response.statusCode), [504, 504, 504, 504, 504]);
    // Long enough for every queued one to have gone out, one deadline after another, had it been sent.
    await sleep(TIMEOUT_MS * 6);
    neverAfterTheAnswer(answers);
    assert.ok(receivedAt.size < 5, `${receivedAt.size} of 5 reads reached the upstream`);
    const balance = await gw.app.inject({ method: 'GET', url: '/v1/billing/balance', headers: bearer(gw.keys['acme:all']) });
    assert.equal(balance.statusCode, 200, balance.body);
  });

  t.test('a write that timed out waiting for a connection is never placed', async () => {
    receivedAt.clear();
    const order = () =>
      gw.app.inject({
        method: 'POST',
        url: '/v1/orders',
        headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': randomUUID() },
        payload: { product_id: ORDER.service_ids[0], billing_cycle: 'monthly' },
      });
    const answers = await all([order, order, order]);
    assert.deepEqual(answers.map(({ response }) => response.statusCode), [504, 504, 504], answers.map(({ response }) => response.body).join('\n'));
    await sleep(WRITE_TIMEOUT_MS * 5);
    neverAfterTheAnswer(answers);
    assert.ok(receivedAt.size < 3, `${receivedAt.size} of 3 orders reached the upstream`);
  });
});
