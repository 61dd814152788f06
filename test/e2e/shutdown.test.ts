/** Graceful shutdown: a request in flight when the gateway starts closing still gets its answer. */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildTestGateway } from '../helpers/gateway.js';
import { call } from '../helpers/http.js';

// The timeout is a liveness bound: without `Connection: close` while draining, a keep-alive client
// holds close() open for the server's keep-alive timeout (72 s).
t.test('close() lets in-flight requests finish, then closes their keep-alive connections', { timeout: 15_000 }, async () => {
  const gw = await buildTestGateway();
  try {
    const base = await gw.app.listen({ host: '127.0.0.1', port: 0 });
    gw.simulator.inject({ action: 'GetClientsDetails', kind: 'latency', ms: 300, times: 1 });
    const inFlight = call(base, 'GET', '/v1/me', { key: gw.keys['acme:all'] });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closed = gw.app.close();
    const response = await inFlight;
    assert.equal(response.status, 200, response.text);
    assert.equal(response.headers.connection, 'close');
    assert.equal(response.json().account.id, 'acme');
    await closed;
    await assert.rejects(call(base, 'GET', '/v1/health'), 'no longer listening');
  } finally {
    await gw.simulator.close();
  }
});
