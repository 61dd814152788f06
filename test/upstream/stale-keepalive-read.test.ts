/**
 * A read written on a keep-alive connection the upstream closes just then.
 *
 * An upstream (or the proxy in front of it) that closes idle connections resets the one undici
 * reuses at that moment: the request was handed to the socket (`sent`), no answer came, and the
 * upstream never worked on it. A read is sent again once (client.ts attempt: no answer started),
 * instead of failing 502 ("the connection broke") and counting as a down-signal for the breaker.
 * A write in the same case cannot be told from one the upstream crashed on: it stays an unknown
 * outcome, sent once.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { BackendError } from '../../src/backend/backend.js';
import { isPlainObject, parseJsonBody, unreadableAnswer } from '../../src/upstream/answers.js';
import { createUpstreamClient, type UpstreamProtocol } from '../../src/upstream/client.js';
import { readAction, writeAction } from '../../src/upstream/policy.js';

type Id = 'list' | 'create';

/** Answers the first request on each connection (keep-alive), and resets the connection on the next. */
async function closesIdleConnections(): Promise<{ server: Server; origin: string; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((socket) => {
    let count = 0;
    socket.on('data', (data) => {
      requests.push(data.toString('latin1').split(' ', 2)[1] ?? '');
      count += 1;
      if (count === 1) socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\nconnection: keep-alive\r\n\r\n{"ok":true}');
      else socket.resetAndDestroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

const protocol: UpstreamProtocol<Id, Record<string, string>, Record<string, unknown>> = {
  label: 'Toy',
  actions: { list: readAction('list', 2_000), create: writeAction('create', 2_000) },
  probe: 'list',
  probeParams: {},
  request: (action) => ({ method: 'POST', path: `/${action.name}`, headers: {}, body: '{}' }),
  callKey: (action) => action.name,
  read(action, { statusCode, body }) {
    const parsed = parseJsonBody(body);
    if (statusCode !== 200 || !isPlainObject(parsed)) throw unreadableAnswer('Toy', action, `HTTP ${statusCode}`, (text) => text);
    return parsed;
  },
  redact: (text) => text,
};

t.test('a read reset on a reused keep-alive connection before any answer is sent again; a write is not', async (t) => {
  const upstream = await closesIdleConnections();
  const client = createUpstreamClient(protocol, {
    origin: upstream.origin,
    connections: 1,
    connectTimeoutMs: 1_000,
    maxResponseBytes: 1_024,
    circuitBreaker: { enabled: true, failureThreshold: 1, openMs: 60_000 },
    now: () => 0,
  });
  t.teardown(async () => {
    await client.close();
    upstream.server.close();
  });

  assert.deepEqual(await client.call('list', {}), { ok: true }, 'a new connection');
  // Written on the kept connection, which the upstream resets: sent again on a new one.
  assert.deepEqual(await client.call('list', {}, { freshness: 'uncached' }), { ok: true });
  assert.deepEqual(upstream.requests, ['/list', '/list', '/list']);

  // The write goes on the connection kept from the retry, and is reset the same way.
  const error = await client.call('create', {}).then(
    () => assert.fail('expected a failure'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof BackendError, String(error));
  assert.equal(error.kind, 'upstream_error');
  assert.equal(error.outcomeUnknown, true, 'it may have run');
  assert.deepEqual(upstream.requests, ['/list', '/list', '/list', '/create'], 'sent once');
});

t.test('a read whose answer started and then broke (mid-body) is not sent again', async (t) => {
  const requests: string[] = [];
  const server = createServer((socket) => {
    socket.on('data', (data) => {
      requests.push(data.toString('latin1').split(' ', 2)[1] ?? '');
      // The status line and part of the body, then the connection closed.
      socket.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{"ok"');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = createUpstreamClient(protocol, {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: 1,
    connectTimeoutMs: 1_000,
    maxResponseBytes: 1_024,
    circuitBreaker: { enabled: true, failureThreshold: 5, openMs: 60_000 },
    now: () => 0,
  });
  t.teardown(async () => {
    await client.close();
    server.close();
  });

  const error = await client.call('list', {}).then(
    () => assert.fail('expected a failure'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof BackendError, String(error));
  assert.equal(error.kind, 'upstream_error');
  assert.equal(error.outcomeUnknown, false, 'a read');
  assert.deepEqual(requests, ['/list'], 'sent once: an answer had started');
});
