/**
 * Only the status counts (reference W7: 2xx is success): a receiver that answered 2xx has accepted
 * the event, whatever becomes of the few bytes of body after it. An answer body cut off (the
 * receiver's process or a proxy closing the connection after the status) or still trickling at the
 * deadline used to make a 200 a failed attempt: the event was sent again, `last_delivery` showed no
 * status, and an endpoint answering 200 every time could be disabled as failing.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { sendWebhook } from '../../src/webhooks/transport.js';

t.test('a 2xx whose answer body breaks or outlasts the deadline is answered, not failed', async (t) => {
  const server = createServer((request, response) => {
    request.resume().on('end', () => {
      if (request.url === '/cut') {
        // The status and a part of the promised body, then the connection goes.
        response.writeHead(200, { 'content-length': '100' });
        response.write('accepted');
        setTimeout(() => response.destroy(), 50);
      } else if (request.url === '/trickle') {
        response.writeHead(202);
        response.write('accepted, working');
        setTimeout(() => response.end(), 2_000).unref();
      } else if (request.url === '/cut-503') {
        response.writeHead(503, { 'content-length': '100', 'retry-after': '60' });
        response.write('busy');
        setTimeout(() => response.destroy(), 50);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  const options = { resolve: async () => ['127.0.0.1'], allowPrivateTargets: true, timeoutMs: 500 };

  assert.deepEqual(await sendWebhook(`http://127.0.0.1:${port}/cut`, {}, '{}', options), { kind: 'answered', status: 200, retryAfter: null });
  assert.deepEqual(await sendWebhook(`http://127.0.0.1:${port}/trickle`, {}, '{}', options), { kind: 'answered', status: 202, retryAfter: null });
  assert.deepEqual(await sendWebhook(`http://127.0.0.1:${port}/cut-503`, {}, '{}', options), { kind: 'answered', status: 503, retryAfter: '60' });
});
