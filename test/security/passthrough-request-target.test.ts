/**
 * The v1 passthrough forwards exactly the path it routed and authorised. A request line in absolute
 * form (`GET http://host/v1/services/7 HTTP/1.1`, RFC 9112 §3.2.2, which servers must accept) is
 * routed by its path; what goes upstream must be that same path, not one rebuilt from the raw
 * request target (which made `/v1/services/7/services/7` of it).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import t from 'tap';
import { buildPassthroughGateway, json, ORDER, SERVICE, type PassthroughGateway } from '../mappings/v1/harness.js';

/** One request on a fresh connection, written as given; resolves with the status line. */
function rawRequest(port: number, lines: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${lines.join('\r\n')}\r\n\r\n`));
    let data = '';
    socket.on('data', (chunk) => (data += chunk));
    socket.on('end', () => resolve(data.split('\r\n')[0] ?? ''));
    socket.on('error', reject);
  });
}

t.test('v1 passthrough: a request target in absolute form', async (t) => {
  let gw: PassthroughGateway;
  let port: number;
  t.before(async () => {
    gw = await buildPassthroughGateway();
    port = Number(new URL(await gw.app.listen({ host: '127.0.0.1', port: 0 })).port);
  });
  t.teardown(() => gw.close());

  for (const [path, answer] of [
    ['/v1/services/7', SERVICE],
    ['/v1/orders/42', ORDER],
    ['/v1/services/7/credentials', { service_id: '7', username: 'u', password: 'p', hostname: null, ip_addresses: [] }],
  ] as const) {
    t.test(`GET http://gateway.example${path} goes upstream as ${path}, or not at all`, async () => {
      gw.upstream.answer(json(200, answer));
      const before = gw.upstream.received.length;
      const status = await rawRequest(port, [
        `GET http://gateway.example${path} HTTP/1.1`,
        'Host: gateway.example',
        `Authorization: Bearer ${gw.keys['acme:all']}`,
        'Connection: close',
      ]);
      const forwarded = gw.upstream.received.slice(before).map((request) => request.url);
      assert.ok(forwarded.every((url) => url === path), `forwarded ${JSON.stringify(forwarded)} for ${path} (${status})`);
      assert.match(status, /^HTTP\/1\.1 (200|400) /);
    });
  }
});
