/**
 * A request whose deadline passes while it waits for a connection is dropped unsent, and the
 * keep-alive connection it was about to be written on stays open for the next one. Aborting it
 * through undici's controller at that point (client-h1.js writeH1) destroys the socket: under
 * overload every expired request in the queue cost a reconnection to the upstream.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { DEADLINE_HEADER, DeadlineDispatcher } from '../../src/upstream/deadline-dispatcher.js';
import { DeadlineExceeded, exchange, ExchangeFailure } from '../../src/upstream/exchange.js';
import { Pool } from '../../src/upstream/undici.js';

/** An upstream that answers `/slow` after 300 ms and anything else at once, counting connections and requests. */
async function upstream(): Promise<{ server: Server; origin: string; connections: () => number; paths: string[] }> {
  const paths: string[] = [];
  let connections = 0;
  const server = createServer((request, response) => {
    paths.push(String(request.url));
    const answer = () => response.end('ok');
    if (request.url === '/slow') setTimeout(answer, 300);
    else answer();
  });
  server.on('connection', () => void (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections, paths };
}

const get = (origin: string, path: string, deadline: number) => ({ origin, path, method: 'GET' as const, headers: {}, deadline, maxResponseBytes: 1024 });

t.test('exchange: a request that expired in the queue is never sent, and its connection is kept', async (t) => {
  const up = await upstream();
  const pool = new Pool(up.origin, { connections: 1 });
  t.teardown(async () => {
    await pool.close();
    up.server.close();
  });
  const slow = exchange(pool, get(up.origin, '/slow', Date.now() + 2_000));
  const queued = exchange(pool, get(up.origin, '/queued', Date.now() + 50)).then(
    () => assert.fail('expected a timeout'),
    (failure: unknown) => failure,
  );
  const failure = await queued;
  assert.ok(failure instanceof ExchangeFailure && failure.reason instanceof DeadlineExceeded, String(failure));
  assert.equal(failure.sent, false);
  assert.equal((await slow).statusCode, 200);
  // undici takes the expired one from its queue once the connection is free: give it that turn.
  await sleep(20);
  assert.equal((await exchange(pool, get(up.origin, '/next', Date.now() + 2_000))).statusCode, 200);
  assert.deepEqual(up.paths, ['/slow', '/next'], 'the expired request never reached the upstream');
  assert.equal(up.connections(), 1, 'the keep-alive connection served the next request');
});

t.test('DeadlineDispatcher: the same for a deadline its header names', async (t) => {
  const up = await upstream();
  const dispatcher = new DeadlineDispatcher(new Pool(up.origin, { connections: 1 }));
  t.teardown(async () => {
    await dispatcher.close();
    up.server.close();
  });
  const request = (path: string, deadline: number) =>
    dispatcher.request({ origin: up.origin, path, method: 'GET', headers: { [DEADLINE_HEADER]: dispatcher.schedule(deadline).header } }).then(async (answer) => {
      await answer.body.text();
      return answer.statusCode;
    });
  const slow = request('/slow', Date.now() + 2_000);
  const queued = await request('/queued', Date.now() + 50).then(
    () => assert.fail('expected a timeout'),
    (error: unknown) => error,
  );
  assert.ok(queued instanceof DeadlineExceeded, String(queued));
  assert.equal(await slow, 200);
  assert.equal(await request('/next', Date.now() + 2_000), 200);
  assert.deepEqual(up.paths, ['/slow', '/next']);
  assert.equal(up.connections(), 1);
});
