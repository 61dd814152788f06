/**
 * A mapped backend's write still waiting for a connection when its request's deadline passes (the
 * connection frees only after it): README "Request deadline" says 504 upstream_timeout with
 * Retry-After, never sent, its Idempotency-Key free at once; not 503 upstream_unavailable.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { BackendError } from '../../src/backend/backend.js';
import { fromBackend } from '../../src/http/problems.js';
import { createUpstreamClient } from '../../src/upstream/client.js';
import { readAction, writeAction } from '../../src/upstream/policy.js';
import { toyProtocol } from '../upstream/toy-protocol.js';

type Id = 'ping' | 'slow' | 'create';

const protocol = toyProtocol<Id>({ ping: readAction('ping', 10_000), slow: readAction('slow', 10_000), create: writeAction('create', 10_000) }, 'ping');

t.test('a write still queued for a connection at its request deadline is a 504, never sent', async (t) => {
  const received: string[] = [];
  // `slow` holds the only connection 2.6 s, past the write's 2 s request deadline.
  const server = createServer((request: IncomingMessage, response) => {
    received.push(request.url ?? '');
    setTimeout(() => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), request.url === '/slow' ? 2_600 : 10);
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
  const error = await client.call('create', {}, { deadline: Date.now() + 2_000 }).then(
    () => assert.fail('answered after the request deadline'),
    (caught: unknown) => caught,
  );
  await slow;
  assert.ok(error instanceof BackendError, String(error));
  const problem = fromBackend(error);
  assert.equal(problem.status, 504, `${problem.reason}: the request deadline, not an unreachable upstream`);
  assert.equal(problem.reason, 'upstream_timeout');
  assert.equal(problem.headers?.['retry-after'], '5');
  assert.equal(error.notRun, true, 'its Idempotency-Key may be used again at once');
  assert.deepEqual(received, ['/slow'], 'the write never reached the upstream');
});
