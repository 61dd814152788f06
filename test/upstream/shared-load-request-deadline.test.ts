/**
 * A read shared with other requests (a coalesced load) keeps its own deadline;
 * each request waits for it only until its own (README "Request deadline"). Sent with the deadline
 * of the request that started it, it failed every request that joined it with time to spare.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import t from 'tap';
import { BackendError } from '../../src/backend/backend.js';
import { readAction, writeAction } from '../../src/upstream/policy.js';
import { toyProtocol, toyUpstream } from './toy-protocol.js';

type Id = 'ping' | 'slow' | 'create';

const protocol = toyProtocol<Id>({ ping: readAction('ping', 10_000), slow: readAction('slow', 10_000), create: writeAction('create', 10_000) }, 'ping');

t.test('a request with time to spare gets the answer of a load a hurried request started', async (t) => {
  // `slow` answers after 1.8 s: past the first request's deadline, well within its own timeout.
  const client = await toyUpstream(t, protocol, (request: IncomingMessage, response) => {
    const answer = () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    if (request.url === '/slow') setTimeout(answer, 1_800);
    else answer();
  }, { connections: 4, failureThreshold: 1 });
  const hurried = client.call('slow', {}, { deadline: Date.now() + 1_200 }).then(
    () => 'answered',
    (error: unknown) => (error instanceof BackendError ? error.kind : String(error)),
  );
  const patient = client.call('slow', {}, { deadline: Date.now() + 60_000 });
  assert.equal(await hurried, 'timeout', 'the hurried request has its 504 at its deadline');
  assert.deepEqual(await patient, { ok: true }, 'the shared load went on for the request with time left');
});
