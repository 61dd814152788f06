/**
 * A write that waited for a connection (every one busy) until less than a second of its request's
 * deadline was left is not sent then (README "Request deadline": a call with less than a second
 * left is not sent): sent, it would be cut at the deadline, an unknown outcome the client must
 * reconcile, where refused it is a 504 whose Idempotency-Key is free at once. Nothing is timed:
 * the connection frees half a second before the deadline, well inside the last second.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { BackendError } from '../../src/backend/backend.js';
import { createUpstreamClient } from '../../src/upstream/client.js';
import { readAction, writeAction } from '../../src/upstream/policy.js';
import { toyProtocol } from './toy-protocol.js';

type Id = 'ping' | 'slow' | 'create';

const protocol = toyProtocol<Id>({ ping: readAction('ping', 10_000), slow: readAction('slow', 10_000), create: writeAction('create', 10_000) }, 'ping');

t.test('a write that got a connection with under a second of its request left is not sent', async (t) => {
  const received: string[] = [];
  // `slow` holds the only connection 1.5 s; `create` would be answered after 2.5 s.
  const server = createServer((request: IncomingMessage, response) => {
    received.push(request.url ?? '');
    const answer = () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    setTimeout(answer, request.url === '/slow' ? 1_500 : 2_500);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = createUpstreamClient(protocol, {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: 1,
    connectTimeoutMs: 1_000,
    maxResponseBytes: 65_536,
    circuitBreaker: { enabled: false, failureThreshold: 5, openMs: 60_000 },
  });
  t.teardown(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const slow = client.call('slow', {}, { freshness: 'uncached' });
  // Two seconds left when it is asked: enough to be queued, not enough once the connection frees.
  const error = await client.call('create', {}, { deadline: Date.now() + 2_000 }).then(
    () => assert.fail('answered after the request deadline'),
    (caught: unknown) => caught,
  );
  await slow;
  assert.ok(error instanceof BackendError, String(error));
  assert.deepEqual(received, ['/slow'], 'the write never reached the upstream');
  assert.equal(error.kind, 'timeout');
  assert.equal(error.notRun, true, 'its Idempotency-Key may be used again at once');
});
