/**
 * Reference S1: a webhook URL uses port 443, or a port of `webhooks.allowedPorts`; checked when it is
 * set (422) and again at each delivery (a stored URL whose port is no longer allowed is blocked).
 * The sandbox (allowPrivateTargets) takes any port.
 */
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import t from 'tap';
import { sendWebhook } from '../../src/webhooks/transport.js';
import { bearer, buildTestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/webhook-receiver.js';

t.test('delivery re-checks the port before anything else', async (t) => {
  let connections = 0;
  const listener = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  t.teardown(() => listener.close());
  const port = (listener.address() as AddressInfo).port;
  const lookups: string[] = [];
  const resolve = async (host: string) => {
    lookups.push(host);
    return ['127.0.0.1'];
  };

  assert.deepEqual(await sendWebhook(`https://hooks.example.com:${port}/in`, {}, '{}', { resolve, allowPrivateTargets: false }), {
    kind: 'blocked',
    reason: 'URL port is not allowed',
  });
  assert.deepEqual(await sendWebhook('https://hooks.example.com/in', {}, '{}', { resolve, allowPrivateTargets: false, allowedPorts: [8443] }), {
    kind: 'blocked',
    reason: 'URL port is not allowed',
  });
  assert.deepEqual(lookups, [], 'refused before the host was looked up');
  const allowed = await sendWebhook(`https://hooks.example.com:${port}/in`, {}, '{}', { resolve, allowPrivateTargets: false, allowedPorts: [443, port] });
  assert.deepEqual(allowed, { kind: 'blocked', reason: 'host resolves to a non-public address' }, 'the port passed');
  assert.equal(connections, 0);
});

t.test('through the gateway', async (t) => {
  const headers = (gw: { keys: Record<string, string> }) => ({ ...bearer(gw.keys['acme:all'] as string), 'content-type': 'application/json' });

  t.test('by default a port other than 443 is refused with 422, and nothing is stored', async () => {
    const gw = await buildTestGateway({ resolveHost: async () => ['93.184.215.14'] });
    try {
      const put = await gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers: headers(gw), payload: { url: 'https://hooks.example.com:8443/in' } });
      assert.equal(put.statusCode, 422, put.body);
      assert.deepEqual(put.json().errors, [{ pointer: '/url', detail: 'URL port must be 443' }]);
      assert.equal((await gw.stores.webhooks.get('acme'))?.url, undefined);
    } finally {
      await gw.close();
    }
  });

  t.test('a configured port is accepted, and delivery checks it with the same list', async () => {
    const lookups: string[] = [];
    // Public for the registration, loopback for the delivery: reached only if the port passed.
    const resolveHost = async (host: string) => (lookups.push(host) === 1 ? ['93.184.215.14'] : ['127.0.0.1']);
    const webhooks = { allowPrivateTargets: false, allowedPorts: [443, 8443], workerIntervalMs: 30, retryScheduleMs: [0] };
    const gw = await buildTestGateway({ runWebhooks: true, resolveHost, config: { webhooks } });
    try {
      await gw.app.ready();
      const put = await gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers: headers(gw), payload: { url: 'https://hooks.example.com:8443/in' } });
      assert.equal(put.statusCode, 200, put.body);
      await eventually(async () => (await gw.stores.webhookOutbox.failed()).length > 0, 'the webhook.test attempt');
      assert.equal(lookups.length, 2, 'the delivery got past the port check to the lookup');
    } finally {
      await gw.close();
    }
  });
});
