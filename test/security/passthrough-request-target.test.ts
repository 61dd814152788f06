/**
 * The v1 passthrough forwards exactly the path it routed and authorised. A request line in absolute
 * form (`GET http://host/v1/services/7 HTTP/1.1`, RFC 9112 §3.2.2, which servers must accept) is
 * routed by its path; what goes upstream must be that same path, not one rebuilt from the raw
 * request target (which made `/v1/services/7/services/7` of it), and the routes without an id,
 * which the proxy serves itself, must not refuse it (they answered 400).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { rawExchange } from '../helpers/http.js';
import { buildPassthroughGateway, json, ORDER, SERVICE, type PassthroughGateway } from '../mappings/v1/harness.js';

t.test('v1 passthrough: a request target in absolute form', async (t) => {
  let gw: PassthroughGateway;
  let port: number;
  t.before(async () => {
    gw = await buildPassthroughGateway();
    port = Number(new URL(await gw.app.listen({ host: '127.0.0.1', port: 0 })).port);
  });
  t.teardown(() => gw.close());

  const ME = {
    account: { id: 'up-acme', name: 'Acme Hosting', company: null, email: 'ops@acme.example', status: 'active', currency: 'USD' },
    key: { id: 'upstream-key', name: 'passthrough', scopes: ['read:services'], created_at: '2026-01-01T00:00:00Z', expires_at: null, rate_limits: { per_minute: 1, burst: 1, per_day: 1, account_per_minute: null } },
  };
  for (const [path, answer] of [
    ['/v1/services/7', SERVICE],
    ['/v1/orders/42', ORDER],
    ['/v1/services/7/credentials', { service_id: '7', username: 'u', password: 'p', hostname: null, ip_addresses: [] }],
    // Routes without an id are the proxy's own: it refused the absolute target with a 400.
    ['/v1/me', ME],
    ['/v1/webhooks', { url: null, updated_at: null, status: null, disabled_reason: null, last_delivery: null, failing_since: null }],
  ] as const) {
    t.test(`GET http://gateway.example${path} is served, and goes upstream as ${path}`, async () => {
      gw.upstream.answer(json(200, answer));
      const before = gw.upstream.received.length;
      const status = (await rawExchange(port, `${[
        `GET http://gateway.example${path} HTTP/1.1`,
        'Host: gateway.example',
        `Authorization: Bearer ${gw.keys['acme:all']}`,
        'Connection: close',
      ].join('\r\n')}\r\n\r\n`)).split('\r\n')[0] ?? '';
      const forwarded = gw.upstream.received.slice(before).map((request) => request.url);
      assert.deepEqual(forwarded, [path], `forwarded for ${path} (${status})`);
      assert.match(status, /^HTTP\/1\.1 200 /, 'served as in origin form');
    });
  }
});
