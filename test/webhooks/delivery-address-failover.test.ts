/**
 * A receiver's host name with several addresses (two load balancers, A and AAAA) of which the
 * first does not take connections: the delivery connected to the first checked address only, so
 * it failed there (and again at every retry that resolved in that order, until the endpoint was
 * disabled) although the receiver was up. Reference §1.5.3 S4 has the lookup pass every checked
 * address on unchanged; the connection then tries the next one, as any client does. It still goes
 * to checked addresses only (DNS rebinding stays closed). Loopback listeners only.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { sendWebhook } from '../../src/webhooks/transport.js';

t.test('webhook delivery to a host with several addresses', async (t) => {
  const seen: string[] = [];
  const server = createServer((request, response) => {
    seen.push(request.socket.localAddress ?? '');
    response.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;
  const url = `http://hooks.example.com:${port}/in`;

  // 127.0.0.2 is loopback too but nothing listens there: connection refused. Sandbox transport
  // (private targets allowed), since a public address cannot be used in a test.
  for (const addresses of [['127.0.0.2', '127.0.0.1'], ['127.0.0.1', '127.0.0.2']]) {
    t.test(`resolved to ${addresses.join(', ')}: delivered to the address that answers`, async () => {
      const result = await sendWebhook(url, {}, '{}', { resolve: async () => addresses, allowPrivateTargets: true });
      assert.deepEqual(result, { kind: 'answered', status: 204, retryAfter: null });
      assert.equal(seen.at(-1), '127.0.0.1');
    });
  }

  t.test('none of the addresses answers: a failed attempt, no other address tried', async () => {
    const result = await sendWebhook(url, {}, '{}', { resolve: async () => ['127.0.0.2', '127.0.0.3'], allowPrivateTargets: true });
    assert.equal(result.kind, 'failed');
  });

  t.test('one non-public address among them still blocks the whole delivery', async () => {
    const before = seen.length;
    const result = await sendWebhook(`https://hooks.example.com:${port}/in`, {}, '{}', {
      resolve: async () => ['93.184.215.14', '127.0.0.1'],
      allowPrivateTargets: false,
      allowedPorts: [port],
    });
    assert.deepEqual(result, { kind: 'blocked', reason: 'host resolves to a non-public address' });
    assert.equal(seen.length, before);
  });
});
