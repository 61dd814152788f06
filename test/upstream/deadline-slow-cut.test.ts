/**
 * `requestDeadlineMs` shorter than every call's own timeout: an upstream that hangs never reaches a
 * call's own timeout, and the calls the request's deadline cut were not told to the breaker, so it
 * never opened and every request waited its whole deadline. A cut call that had waited for its
 * answer SLOW_CUT_MS (1.5 s) or more is a timeout like its own would be; one sent with only the last sliver
 * of its request's time still says nothing (test/upstream/deadline-breaker-count.test.ts).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { CircuitOpenError } from '../../src/upstream/breaker.js';
import { readAction } from '../../src/upstream/policy.js';
import { toyProtocol, toyUpstream } from './toy-protocol.js';

type Id = 'ping' | 'hang';

t.test('calls cut by the request deadline after waiting long open the breaker of a hanging upstream', async (t) => {
  const protocol = toyProtocol<Id>({ ping: readAction('ping', 15_000), hang: readAction('hang', 15_000) }, 'ping');
  const client = await toyUpstream(t, protocol, (request, response) => {
    if (request.url === '/ping') response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  }, { connections: 4, failureThreshold: 2 });
  // Every request's deadline (the operator's 2 s, the least allowed) is far below the calls' own 15 s.
  const deadline = () => ({ freshness: 'uncached' as const, deadline: Date.now() + 2_000 });
  for (const _ of [1, 2]) await client.call('hang', {}, deadline()).then(() => assert.fail('answered'), () => undefined);
  const refused = await client.call('ping', {}, deadline()).catch((error: unknown) => error);
  assert.ok(refused instanceof CircuitOpenError, `two calls cut after waiting 2 s open the breaker: ${JSON.stringify(refused)}`);
});
