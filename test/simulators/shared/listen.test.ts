/** The simulators' server lifecycle: a URL that names the address it listens on, and a close that never waits on a request. */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import t from 'tap';
import { request } from 'undici';
import { listen } from '../../../simulators/shared/listen.js';

t.test('the URL names the host and the port chosen', async () => {
  const listening = await listen(createServer((_req, res) => res.end('ok')), '127.0.0.1', 0);
  assert.match(listening.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.ok(listening.port > 0);
  assert.equal(listening.url, `http://127.0.0.1:${listening.port}`);
  const answer = await request(listening.url);
  assert.equal(await answer.body.text(), 'ok');
  await listening.close();
});

t.test('close ends the connections of requests still waiting for their answer', async () => {
  // A simulator's answer may wait out a latency: close must not wait for it.
  const server = createServer(() => undefined);
  const sockets: Socket[] = [];
  server.on('connection', (socket) => sockets.push(socket));
  const listening = await listen(server, '127.0.0.1', 0);
  const pending = request(listening.url);
  await once(server, 'request');
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('close waited for the request in flight')), 10_000);
  });
  try {
    await Promise.race([listening.close(), hung]);
    assert.equal(sockets[0]?.destroyed, true);
  } finally {
    clearTimeout(timer);
    // After a failure, what close left open would keep this test's process alive.
    for (const socket of sockets) socket.destroy();
  }
  assert.equal(server.listening, false);
  await assert.rejects(pending, { code: 'UND_ERR_SOCKET' });
});

t.test('a port in use fails the start', async () => {
  const first = await listen(createServer(), '127.0.0.1', 0);
  await assert.rejects(listen(createServer(), '127.0.0.1', first.port), { code: 'EADDRINUSE' });
  await first.close();
});
