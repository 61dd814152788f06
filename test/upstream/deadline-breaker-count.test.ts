/**
 * The upstream client's breaker under the request's deadline: a call cut by the request's own
 * deadline says nothing of the upstream, so it neither counts as a down-signal nor as an answer.
 * Before, it was taken as an answer and reset the count: against an upstream that hangs, calls of
 * requests with short deadlines between the others kept the breaker from ever opening, and every
 * request waited its whole timeout instead of failing fast.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { BackendError } from '../../src/backend/backend.js';
import { CircuitOpenError } from '../../src/upstream/breaker.js';
import { createUpstreamClient } from '../../src/upstream/client.js';
import { readAction } from '../../src/upstream/policy.js';
import { toyProtocol } from '../upstream/toy-protocol.js';

type Id = 'ping' | 'hang';

const protocol = toyProtocol<Id>({ ping: readAction('ping', 5_000), hang: readAction('hang', 1_100) }, 'ping');

t.test('a call cut by the request deadline leaves the count of down-signals as it was', async (t) => {
  // `hang` is never answered: its own 1.1 s timeout is a down-signal, a shorter request deadline cuts it first.
  const server = createServer((request, response) => {
    if (request.url === '/ping') response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = createUpstreamClient(protocol, {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: 4,
    connectTimeoutMs: 1_000,
    maxResponseBytes: 65_536,
    circuitBreaker: { enabled: true, failureThreshold: 2, openMs: 60_000 },
  });
  t.teardown(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const failed = (work: Promise<unknown>) => work.then(() => assert.fail('answered'), (caught: unknown) => caught);

  assert.equal(((await failed(client.call('hang', {}, { freshness: 'uncached' }))) as BackendError).kind, 'timeout');
  // Sent with just over the least second left, and cut by its request's deadline 1.05 s in.
  assert.equal(((await failed(client.call('hang', {}, { freshness: 'uncached', deadline: Date.now() + 1_050 }))) as BackendError).kind, 'timeout');
  assert.equal(((await failed(client.call('hang', {}, { freshness: 'uncached' }))) as BackendError).kind, 'timeout');
  const refused = await failed(client.call('ping', {}, { freshness: 'uncached' }));
  assert.ok(refused instanceof CircuitOpenError, `two own timeouts in a row, the cut between them aside, open the breaker: ${String(refused)}`);
});
