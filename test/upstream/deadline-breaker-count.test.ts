/**
 * The upstream client's breaker under the request's deadline: a call cut by the request's own
 * deadline says nothing of the upstream, so it neither counts as a down-signal nor as an answer.
 * Before, it was taken as an answer and reset the count: against an upstream that hangs, calls of
 * requests with short deadlines between the others kept the breaker from ever opening, and every
 * request waited its whole timeout instead of failing fast.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { BackendError } from '../../src/backend/backend.js';
import { CircuitOpenError } from '../../src/upstream/breaker.js';
import { readAction } from '../../src/upstream/policy.js';
import { toyProtocol, toyUpstream } from './toy-protocol.js';

type Id = 'ping' | 'hang';

const protocol = toyProtocol<Id>({ ping: readAction('ping', 5_000), hang: readAction('hang', 1_100) }, 'ping');

t.test('a call cut by the request deadline leaves the count of down-signals as it was', async (t) => {
  // `hang` is never answered: its own 1.1 s timeout is a down-signal, a shorter request deadline cuts it first.
  const client = await toyUpstream(t, protocol, (request, response) => {
    if (request.url === '/ping') response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  }, { connections: 4, failureThreshold: 2 });
  const failed = (work: Promise<unknown>) => work.then(() => assert.fail('answered'), (caught: unknown) => caught);

  assert.equal(((await failed(client.call('hang', {}, { freshness: 'uncached' }))) as BackendError).kind, 'timeout');
  // Sent with just over the least second left, and cut by its request's deadline 1.05 s in.
  assert.equal(((await failed(client.call('hang', {}, { freshness: 'uncached', deadline: Date.now() + 1_050 }))) as BackendError).kind, 'timeout');
  assert.equal(((await failed(client.call('hang', {}, { freshness: 'uncached' }))) as BackendError).kind, 'timeout');
  const refused = await failed(client.call('ping', {}, { freshness: 'uncached' }));
  assert.ok(refused instanceof CircuitOpenError, `two own timeouts in a row, the cut between them aside, open the breaker: ${String(refused)}`);
});
