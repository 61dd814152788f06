/**
 * The upstream client under a request's deadline (UpstreamCallContext.deadline): a call ends by
 * then whatever its own timeout, one with too little of it left is never sent, and a read shared
 * with other requests is waited for only until then. No timing is asserted: the upstream answers
 * well after each deadline.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import t from 'tap';
import { BackendError } from '../../src/backend/backend.js';
import { readAction, writeAction } from '../../src/upstream/policy.js';
import { toyProtocol, toyUpstream } from './toy-protocol.js';

type Id = 'ping' | 'slow' | 'create';

// Own timeouts far beyond the request deadlines below.
const protocol = toyProtocol<Id>({ ping: readAction('ping', 10_000), slow: readAction('slow', 10_000), create: writeAction('create', 10_000) }, 'ping');

t.test('calls under a request deadline', async (t) => {
  const received: string[] = [];
  // `ping` at once; `slow` and `create` after 2.5 s, well past every request deadline here.
  // One down-signal opens the breaker: a call cut by the request's deadline must not be one.
  const client = await toyUpstream(t, protocol, (request: IncomingMessage, response) => {
    received.push(request.url ?? '');
    const answer = () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    if (request.url === '/ping') answer();
    else setTimeout(answer, 2_500);
  }, { connections: 4, failureThreshold: 1 });
  const failure = (work: Promise<unknown>) => work.then(() => assert.fail('answered after the request deadline, yet taken as a success'), (caught: unknown) => caught);

  t.test('a write sent in time but answered after the request deadline: a timeout, outcome unknown, not a down-signal', async () => {
    const error = await failure(client.call('create', {}, { deadline: Date.now() + 1_300 }));
    assert.ok(error instanceof BackendError, String(error));
    assert.equal(error.kind, 'timeout');
    assert.equal(error.outcomeUnknown, true);
    assert.deepEqual(await client.call('ping', {}, { freshness: 'uncached' }), { ok: true }, 'the breaker stayed closed');
  });

  t.test('a write with too little of the request left is never sent, and known not to have run', async () => {
    const before = received.length;
    const error = await failure(client.call('create', {}, { deadline: Date.now() + 300 }));
    assert.ok(error instanceof BackendError, String(error));
    assert.equal(error.kind, 'timeout');
    assert.equal(error.outcomeUnknown, false);
    assert.equal(error.notRun, true, 'its Idempotency-Key may be used again at once');
    assert.equal(received.length, before, 'nothing reached the upstream');
  });

  t.test('a coalesced read is waited for only until the request deadline', async () => {
    const error = await failure(client.call('slow', {}, { deadline: Date.now() + 1_300 }));
    assert.ok(error instanceof BackendError, String(error));
    assert.equal(error.kind, 'timeout');
    assert.equal(error.notRun, false, 'a read never frees a key: it may follow a sent write');
  });
});
