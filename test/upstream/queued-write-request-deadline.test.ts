/**
 * A write that waited for a connection (every one busy) is not sent once too little of its
 * request's deadline is left (README "Request deadline": a call with less than a second left is not
 * sent): sent, it would be cut at the deadline, an unknown outcome the client must reconcile, where
 * refused it is a 504 upstream_timeout with Retry-After whose Idempotency-Key is free at once (not
 * 503 upstream_unavailable). Nothing is timed: the connection frees either well inside the last
 * second, or only after the deadline.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import t, { type Test } from 'tap';
import { BackendError } from '../../src/backend/backend.js';
import { fromBackend } from '../../src/http/problems.js';
import { readAction, writeAction } from '../../src/upstream/policy.js';
import { toyProtocol, toyUpstream } from './toy-protocol.js';

type Id = 'ping' | 'slow' | 'create';

const protocol = toyProtocol<Id>({ ping: readAction('ping', 10_000), slow: readAction('slow', 10_000), create: writeAction('create', 10_000) }, 'ping');

/**
 * A client of one connection, which `slow` holds `slowMs`, and a write asked with 2 s of its
 * request left (answered after `createMs`, were it sent): what the write ends with, and the paths
 * the upstream was sent.
 */
async function queuedWrite(t: Test, slowMs: number, createMs: number): Promise<{ error: unknown; received: string[] }> {
  const received: string[] = [];
  const client = await toyUpstream(t, protocol, (request: IncomingMessage, response) => {
    received.push(request.url ?? '');
    setTimeout(() => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), request.url === '/slow' ? slowMs : createMs);
  }, { connections: 1 });
  const slow = client.call('slow', {}, { freshness: 'uncached' });
  const error = await client.call('create', {}, { deadline: Date.now() + 2_000 }).then(
    () => assert.fail('answered after the request deadline'),
    (caught: unknown) => caught,
  );
  await slow;
  return { error, received };
}

t.test('a write that got a connection with under a second of its request left is not sent', async (t) => {
  // The connection frees after 1.5 s: enough to be queued, not enough once it frees.
  const { error, received } = await queuedWrite(t, 1_500, 2_500);
  assert.ok(error instanceof BackendError, String(error));
  assert.deepEqual(received, ['/slow'], 'the write never reached the upstream');
  assert.equal(error.kind, 'timeout');
  assert.equal(error.notRun, true, 'its Idempotency-Key may be used again at once');
});

t.test('a write still queued for a connection at its request deadline is a 504, never sent', async (t) => {
  // The connection frees after 2.6 s, past the write's 2 s request deadline.
  const { error, received } = await queuedWrite(t, 2_600, 10);
  assert.ok(error instanceof BackendError, String(error));
  const problem = fromBackend(error);
  assert.equal(problem.status, 504, `${problem.reason}: the request deadline, not an unreachable upstream`);
  assert.equal(problem.reason, 'upstream_timeout');
  assert.equal(problem.headers?.['retry-after'], '5');
  assert.equal(error.notRun, true, 'its Idempotency-Key may be used again at once');
  assert.deepEqual(received, ['/slow'], 'the write never reached the upstream');
});
