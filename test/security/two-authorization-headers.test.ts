/**
 * A request with two Authorization headers. Node keeps the first and silently drops the second, so
 * the gateway authenticated whichever came first (a valid key then anything: 200), while a proxy
 * in front may have read the other. Over a real socket, as Node parses it: 401 with the challenge,
 * on v1 (held key or not) and on the admin API.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { buildAdminGateway, type AdminGateway } from '../admin/helpers.js';

/** Sends `GET path` with the given header lines; the status line, WWW-Authenticate and body. */
function send(port: number, path: string, lines: string[]): Promise<{ status: number; challenge: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n${lines.map((line) => `${line}\r\n`).join('')}Connection: close\r\n\r\n`);
    });
    let text = '';
    socket.on('data', (chunk) => (text += chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), challenge: /^www-authenticate: (.*)$/im.exec(head)?.[1], body });
    });
  });
}

t.test('two Authorization headers', async (t) => {
  let gw: AdminGateway;
  let v1Port: number;
  let opsPort: number;
  t.before(async () => {
    gw = await buildAdminGateway();
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    await gw.ops.listen({ port: 0, host: '127.0.0.1' });
    v1Port = (gw.app.server.address() as AddressInfo).port;
    opsPort = (gw.ops.server.address() as AddressInfo).port;
  });
  t.teardown(() => gw.close());

  t.test('v1: 401 whichever comes first, the key held or not', async () => {
    const key = gw.keys['acme:all'] as string;
    const other = gw.keys['acme:read-only'] as string;
    for (const lines of [
      [`Authorization: Bearer ${key}`, 'Authorization: Bearer nothing'],
      [`Authorization: Bearer ${key}`, `authorization: Bearer ${other}`],
      ['Authorization: Basic YWNtZTpzZWNyZXQ=', `Authorization: Bearer ${key}`],
    ]) {
      // Twice: the first may look the key up in the store, the second finds it held.
      for (const attempt of [1, 2]) {
        const answer = await send(v1Port, '/v1/me', lines);
        assert.equal(answer.status, 401, `${lines.join(' | ')} (${attempt}): ${answer.body}`);
        assert.equal(answer.challenge, 'Bearer realm="v1", error="invalid_token"');
        assert.match(answer.body, /"reason":"unauthenticated"/);
        assert.match(answer.body, /one Authorization header/);
      }
    }
    assert.equal((await send(v1Port, '/v1/me', [`Authorization: Bearer ${key}`])).status, 200, 'one header still works');
  });

  t.test('admin: 401 too', async () => {
    const token = gw.tokens.all?.token as string;
    const answer = await send(opsPort, '/admin/v1/accounts', [`Authorization: Bearer ${token}`, 'Authorization: Bearer nothing']);
    assert.equal(answer.status, 401, answer.body);
    assert.equal(answer.challenge, 'Bearer realm="admin", error="invalid_token"');
    assert.equal((await send(opsPort, '/admin/v1/accounts', [`Authorization: Bearer ${token}`])).status, 200, 'one header still works');
  });
});
