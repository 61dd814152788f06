/**
 * A client that closes its connection while the v1 upstream works on its request: reply-from drops
 * the answer when it arrives (request.raw.aborted) and calls neither onResponse nor onError, so the
 * capture waited for its deadline and counted a timeout, a down-signal. Clients that give up
 * before a slow (but answering) upstream opened the breaker: every account then got 503.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, SERVICE } from './harness.js';

t.test('v1 passthrough: clients that hang up are not upstream down-signals', async (t) => {
  const gw = await buildPassthroughGateway({ v1: { circuitBreaker: { failureThreshold: 2, openMs: 10_000 } } });
  t.teardown(() => gw.close());
  const port = Number(new URL(await gw.app.listen({ host: '127.0.0.1', port: 0 })).port);
  const key = gw.keys['acme:all'] as string;
  // Answers every request, 100 ms after it came.
  gw.upstream.answer((request, response, socket) => void setTimeout(() => json(200, SERVICE)(request, response, socket), 100));

  for (let i = 0; i < 3; i += 1) {
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET /v1/services/7 HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${key}\r\n\r\n`));
    socket.on('error', () => undefined);
    await sleep(30);
    socket.destroy();
    // Past the upstream's answer and past the 500 ms read deadline.
    await sleep(650);
  }
  assert.equal(gw.upstream.received.length, 3, 'each was forwarded and answered');
  assert.ok(!gw.logs.some((line) => line.includes('circuit breaker opened')), 'the breaker stayed closed');
  assert.ok(!gw.logs.some((line) => line.includes('"upstream_timeout"')), 'no timeout was reported: the upstream answered in time');

  const next = await gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['beta:all']) });
  assert.equal(next.statusCode, 200, next.body);
  assert.equal(gw.upstream.received.length, 4);
});
