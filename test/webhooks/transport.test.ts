/**
 * SSRF safety at delivery: one resolution whose every address is checked, a connection to the
 * checked address only (DNS rebinding fails), bounded time and answer size. Loopback listeners only.
 */
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import t from 'tap';
import { WebhookConfigSchema } from '../../src/config.js';
import { DELIVERY_TIMEOUT_MS, sendWebhook } from '../../src/webhooks/transport.js';
import { buildTestGateway } from '../helpers/gateway.js';
import { call } from '../helpers/http.js';
import { eventually } from '../helpers/webhook-receiver.js';

/** A TCP listener that only counts connections (a delivery that reaches it was not refused). */
async function countingListener() {
  let connections = 0;
  const server = createTcpServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

t.test('webhook transport', async (t) => {
  const hosts: string[] = [];
  let lastHost = '';
  const server = createHttpServer((request, response) => {
    lastHost = request.headers.host ?? '';
    if (request.url === '/endless') {
      response.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 120);
      const pump = (): void => {
        while (response.write(chunk)) if (response.destroyed) return;
        response.once('drain', pump);
      };
      pump();
      return;
    }
    if (request.url === '/silent') return;
    response.writeHead(204).end();
  });
  let port = 0;
  t.before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  t.teardown(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const resolveTo = (address: string) => async (host: string) => {
    hosts.push(host);
    return [address];
  };

  t.test('connects to the address it resolved and checked, once, keeping the host name', async () => {
    hosts.length = 0;
    const result = await sendWebhook(`http://hooks.example.com:${port}/in`, {}, '{}', { resolve: resolveTo('127.0.0.1'), allowPrivateTargets: true });
    assert.deepEqual(result, { kind: 'answered', status: 204, retryAfter: null });
    assert.deepEqual(hosts, ['hooks.example.com'], 'one resolution');
    assert.equal(lastHost, `hooks.example.com:${port}`);
  });

  t.test('refuses non-public addresses, http and literal loopback unless private targets are allowed', async () => {
    const listener = await countingListener();
    try {
      // The port is allowed: what is refused is the address.
      const options = { resolve: resolveTo('127.0.0.1'), allowPrivateTargets: false, allowedPorts: [listener.port] };
      for (const url of [`https://hooks.example.com:${listener.port}/`, `https://127.0.0.1:${listener.port}/`, `https://[::ffff:127.0.0.1]:${listener.port}/`, `http://93.184.215.14:${listener.port}/`]) {
        const result = await sendWebhook(url, {}, '{}', options);
        assert.equal(result.kind, 'blocked', url);
      }
      const mixed = await sendWebhook(`https://hooks.example.com:${listener.port}/`, {}, '{}', {
        resolve: async () => ['93.184.215.14', '127.0.0.1'],
        allowPrivateTargets: false,
        allowedPorts: [listener.port],
      });
      assert.deepEqual(mixed, { kind: 'blocked', reason: 'host resolves to a non-public address' });
      assert.equal(listener.connections(), 0, 'nothing was connected to');
    } finally {
      await listener.close();
    }
  });

  t.test('reads at most 64 KiB of an endless answer, and gives up on a silent receiver', async () => {
    const options = { resolve: resolveTo('127.0.0.1'), allowPrivateTargets: true };
    assert.deepEqual(await sendWebhook(`http://127.0.0.1:${port}/endless`, {}, '{}', options), { kind: 'answered', status: 200, retryAfter: null });
    const silent = await sendWebhook(`http://127.0.0.1:${port}/silent`, {}, '{}', { ...options, timeoutMs: 300 });
    assert.deepEqual(silent, { kind: 'failed', reason: 'timed out' });
  });
});

t.test('a receiver gets 15 s to answer (reference W8), and a claim outlives the whole attempt', async () => {
  assert.equal(DELIVERY_TIMEOUT_MS, 15_000);
  // Taken over sooner, a slow delivery still in flight would be sent again by another instance.
  const { claimIdleMs } = WebhookConfigSchema.parse({});
  assert.ok(claimIdleMs >= DELIVERY_TIMEOUT_MS + 5_000, String(claimIdleMs));
  assert.throws(() => WebhookConfigSchema.parse({ claimIdleMs: 15_000 }), /claimIdleMs[\s\S]*at least 20000|at least 20000[\s\S]*claimIdleMs/);
});

t.test('DNS rebinding at delivery', async (t) => {
  t.test('a host that resolved to a public address at registration and to loopback at delivery is not connected to', async () => {
    const listener = await countingListener();
    let lookups = 0;
    // Public the first time (the PUT's check), loopback from then on (the delivery).
    const rebinding = async () => (lookups++ === 0 ? ['93.184.215.14'] : ['127.0.0.1']);
    const gw = await buildTestGateway({
      runWebhooks: true,
      resolveHost: rebinding,
      config: { webhooks: { allowPrivateTargets: false, allowedPorts: [443, listener.port], workerIntervalMs: 30, retryScheduleMs: [0] } },
    });
    try {
      const base = await gw.app.listen({ host: '127.0.0.1', port: 0 });
      const key = gw.keys['acme:all'] as string;
      const set = await call(base, 'PUT', '/v1/webhooks', { key, body: { url: `https://rebind.example.com:${listener.port}/hook` } });
      assert.equal(set.status, 200, set.text);
      const state = await eventually(async () => {
        const current = (await call(base, 'GET', '/v1/webhooks', { key })).json();
        return current.last_delivery ? current : undefined;
      }, 'the attempt is recorded');
      assert.equal(state.last_delivery.http_status, null);
      assert.ok(lookups >= 2, 'delivery resolved again');
      assert.equal(listener.connections(), 0, 'loopback was never connected to');
      const [failed] = await eventually(async () => {
        const ids = await gw.stores.webhookOutbox.failed();
        return ids.length > 0 ? ids : undefined;
      }, 'the event is marked failed after its last attempt');
      assert.match(String(failed), /^evt_/);
      const metrics = await gw.app.metrics.registry.metrics();
      assert.match(metrics, /^gateway_webhook_deliveries_total\{outcome="blocked"\} 1$/m, 'counted as blocked, not sent');
    } finally {
      await gw.close();
      await listener.close();
    }
  });
});
