/**
 * An action's timeoutMs is its deadline: an upstream that answers later than that gets a timeout
 * (504 upstream_timeout for the client, the outcome unknown for a write), not a late success. An
 * operator who sets a write timeout of 400 ms relies on it: the idempotency lease and settle time
 * are computed from it. (No timing is asserted: the upstream answers well after the deadline.)
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { BackendError } from '../../src/backend/backend.js';
import { createUpstreamClient } from '../../src/upstream/client.js';
import { readAction, writeAction } from '../../src/upstream/policy.js';
import { toyProtocol } from './toy-protocol.js';

type Id = 'ping' | 'create';

const protocol = toyProtocol<Id>({ ping: readAction('ping', 1_000), create: writeAction('create', 400) }, 'ping');

t.test('a write answered after its timeout is a timeout with an unknown outcome', async (t) => {
  // Answers after 700 ms: well past the 400 ms deadline, before twice it.
  const server = createServer((_request, response) => {
    setTimeout(() => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), 700);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = createUpstreamClient(protocol, {
    origin,
    connections: 1,
    connectTimeoutMs: 1_000,
    maxResponseBytes: 65_536,
    circuitBreaker: { enabled: false, failureThreshold: 5, openMs: 1_000 },
  });
  t.teardown(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const error = await client.call('create', {}).then(
    () => assert.fail('answered after the deadline, yet taken as a success'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof BackendError);
  assert.equal(error.kind, 'timeout');
  assert.equal(error.outcomeUnknown, true);
});
