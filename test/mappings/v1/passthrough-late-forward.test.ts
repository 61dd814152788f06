/**
 * The v1 passthrough under the request's deadline: a write whose body took most of it to arrive
 * (a slow client) has less than a second left when it would be forwarded. README "Request
 * deadline": it is not sent; the client gets 504 with Retry-After, and its Idempotency-Key is free
 * again at once (the same request, sent again in time, is forwarded).
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, ORDER } from './harness.js';

const BODY = JSON.stringify({ product_id: '1', billing_cycle: 'monthly' });

/** The body in two parts, the second `delayMs` after the first. */
function slowBody(delayMs: number): Readable {
  let step = 0;
  return new Readable({
    read() {
      step += 1;
      if (step === 1) this.push(BODY.slice(0, 10));
      else if (step === 2) setTimeout(() => this.push(BODY.slice(10)), delayMs);
      else this.push(null);
    },
  });
}

t.test('v1 passthrough: a write left with under a second of its request deadline is not forwarded', async (t) => {
  const gw = await buildPassthroughGateway({ config: { requestDeadlineMs: 3_000 }, v1: { writeTimeoutMs: 5_000, circuitBreaker: { enabled: false } } });
  t.teardown(() => gw.close());
  gw.upstream.answer(json(201, ORDER));
  const order = (payload: string | Readable) =>
    gw.app.inject({
      method: 'POST',
      url: '/v1/orders',
      headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json', 'content-length': String(BODY.length), 'idempotency-key': 'late-forward-1' },
      payload,
    });

  // 2.4 s of the 3 s spent receiving the body; sent again whole, it has the 3 s to be forwarded.
  const late = await order(slowBody(2_400));
  assert.equal(late.statusCode, 504, late.body);
  assert.equal(late.json().reason, 'upstream_timeout');
  assert.equal(late.headers['retry-after'], '5');
  assert.deepEqual(gw.upstream.received, [], 'nothing was forwarded');

  const again = await order(BODY);
  assert.equal(again.statusCode, 201, `the key is free again: ${again.body}`);
  assert.equal(gw.upstream.received.length, 1);
});
