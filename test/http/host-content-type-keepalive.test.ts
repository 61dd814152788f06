/**
 * HTTP/1.1 at the front door, on real sockets where inject cannot show it:
 * - RFC 9112 §3.2: a request with more than one Host line, or a Host that is not `uri-host[:port]`,
 *   is 400 (Node keeps the first Host line and passes any value);
 * - one body, one type: a request that declares its Content-Type twice is refused in either order
 *   (Node keeps the first line; a proxy in front may have read the other);
 * - the keep-alive idle timeout is the config's (`keepAliveTimeoutMs`), for load balancers whose
 *   own idle timeout is longer than Fastify's 72 s.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import t from 'tap';
import { rawExchange } from '../helpers/http.js';
import { buildAdminGateway } from '../admin/helpers.js';
import { buildTestGateway } from '../helpers/gateway.js';

function assertProblem(raw: string, status: number, reason: string, what: string): void {
  assert.match(raw, new RegExp(`^HTTP/1\\.1 ${status} `), `${what}: ${raw}`);
  assert.match(raw, /content-type: application\/problem\+json/i, `${what}: ${raw}`);
  const requestId = /x-request-id: ([0-9a-f-]{36})/i.exec(raw)?.[1];
  assert.ok(requestId, `${what}: no X-Request-Id in ${JSON.stringify(raw)}`);
  const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
  assert.equal(body.reason, reason, what);
  assert.equal(body.request_id, requestId, what);
}

async function port(listening: Promise<string>): Promise<number> {
  return Number(new URL(await listening).port);
}

t.test('Host: one line, a valid value (RFC 9112 §3.2), on both listeners', async (t) => {
  const gw = await buildAdminGateway();
  t.teardown(() => gw.close());
  const v1 = await port(gw.app.listen({ host: '127.0.0.1', port: 0 }));
  const ops = await port(gw.ops.listen({ host: '127.0.0.1', port: 0 }));
  const health = (host: string) => `GET /v1/health HTTP/1.1\r\n${host}Connection: close\r\n\r\n`;

  t.test('two Host lines → 400 problem, whichever is first', async () => {
    assertProblem(await rawExchange(v1, health('Host: a.example\r\nHost: b.example\r\n')), 400, 'invalid_request', 'two Host lines');
    assertProblem(await rawExchange(v1, health('Host: a.example\r\nhost: a.example\r\n')), 400, 'invalid_request', 'the same Host twice');
    const auth = `Authorization: Bearer ${gw.tokens.all?.token}\r\n`;
    const admin = await rawExchange(ops, `GET /admin/v1/accounts HTTP/1.1\r\nHost: a\r\nHost: b\r\n${auth}Connection: close\r\n\r\n`);
    assertProblem(admin, 400, 'invalid_request', 'admin, two Host lines');
  });

  t.test('a Host that is not uri-host[:port] → 400 problem', async () => {
    for (const host of ['a b', 'a.example/x', 'user@a.example', '[::1', 'a.example:80x', 'a.example:80:80', 'é.example']) {
      assertProblem(await rawExchange(v1, health(`Host: ${host}\r\n`)), 400, 'invalid_request', `Host: ${host}`);
    }
  });

  t.test('every valid form is served: names, addresses, ports, and the empty value', async () => {
    for (const host of ['a.example', 'a.example.', 'a.example:3000', '10.0.0.5:3000', '[::1]', '[::1]:3000', '[fe80::1%25eth0]', 'xn--bcher-kva.example', 'a_b.example', 'a.example:', '']) {
      const raw = await rawExchange(v1, health(`Host: ${host}\r\n`));
      assert.match(raw, /^HTTP\/1\.1 200 /, `Host: ${host}: ${raw}`);
    }
    // HTTP/1.0 may omit it, and an absolute-form target names the host itself (Host is then ignored).
    assert.match(await rawExchange(v1, 'GET /v1/health HTTP/1.0\r\n\r\n'), /^HTTP\/1\.1 200 /);
    assert.match(await rawExchange(v1, 'GET http://a.example/v1/health HTTP/1.1\r\nHost: b.example\r\nConnection: close\r\n\r\n'), /^HTTP\/1\.1 200 /);
  });
});

t.test('a body whose Content-Type is declared twice is refused (415), in either order; nothing runs', async (t) => {
  const gw = await buildAdminGateway();
  t.teardown(() => gw.close());
  const v1 = await port(gw.app.listen({ host: '127.0.0.1', port: 0 }));
  const order = JSON.stringify({ product_id: '1', billing_cycle: 'monthly' });
  const post = (types: string[], key: string) =>
    rawExchange(
      v1,
      `POST /v1/orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.keys['acme:all']}\r\nIdempotency-Key: ${key}\r\n` +
        types.map((type) => `Content-Type: ${type}\r\n`).join('') +
        `Content-Length: ${Buffer.byteLength(order)}\r\nConnection: close\r\n\r\n${order}`,
    );
  const ordersBefore = gw.simulator.state.orders.length;
  assertProblem(await post(['application/json', 'text/plain'], 'two-types-1'), 415, 'unsupported_media_type', 'JSON first');
  assertProblem(await post(['text/plain', 'application/json'], 'two-types-2'), 415, 'unsupported_media_type', 'JSON second');
  assertProblem(await post(['application/json', 'application/json'], 'two-types-3'), 415, 'unsupported_media_type', 'JSON twice');
  assert.equal(gw.simulator.state.orders.length, ordersBefore, 'no order placed');
  // One Content-Type (its parameters in any spelling) is still read.
  assert.match(await post(['application/json; charset=UTF-8'], 'one-type'), /^HTTP\/1\.1 201 /);

  const ops = await port(gw.ops.listen({ host: '127.0.0.1', port: 0 }));
  const account = JSON.stringify({ id: 'twotypes', name: 'Two types', upstream_id: '3' });
  const admin = await rawExchange(
    ops,
    `POST /admin/v1/accounts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.tokens.all?.token}\r\nContent-Type: application/json\r\n` +
      `Content-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(account)}\r\nConnection: close\r\n\r\n${account}`,
  );
  assertProblem(admin, 415, 'unsupported_media_type', 'admin, two types');
  assert.equal(await gw.stores.keys.getAccount('twotypes'), null, 'no account created');
});

/** One request on a kept-alive connection; resolves with the answer's head and when the server closed it. */
function idleAfterAnswer(port: number, path: string): Promise<{ head: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`));
    let data = '';
    let answeredAt = 0;
    socket.on('data', (chunk) => {
      data += String(chunk);
      if (answeredAt === 0 && data.includes('\r\n\r\n')) answeredAt = Date.now();
    });
    socket.on('close', () => resolve({ head: data.slice(0, data.indexOf('\r\n\r\n')), closedAfterMs: Date.now() - answeredAt }));
    socket.on('error', reject);
  });
}

t.test('the keep-alive idle timeout is configurable (keepAliveTimeoutMs), Fastify\'s 72 s by default', async (t) => {
  const standard = await buildTestGateway();
  t.teardown(() => standard.close());
  assert.equal(standard.app.server.keepAliveTimeout, 72_000);

  const configured = await buildTestGateway({ config: { keepAliveTimeoutMs: 1_500 } });
  t.teardown(() => configured.close());
  assert.equal(configured.app.server.keepAliveTimeout, 1_500);
  const v1 = await port(configured.app.listen({ host: '127.0.0.1', port: 0 }));
  const { head, closedAfterMs } = await idleAfterAnswer(v1, '/v1/health');
  assert.match(head, /^HTTP\/1\.1 200 /);
  assert.match(head, /keep-alive: timeout=1\r?$/im, head);
  assert.ok(closedAfterMs >= 1_000 && closedAfterMs < 4_000, `closed ${closedAfterMs} ms after the answer`);
});
