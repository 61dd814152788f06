/**
 * Calls already queued for a connection when WHMCS refuses the gateway's credentials are held too:
 * the hold is looked at when a connection takes a call, not only when the call is made. Each call
 * sent would be one more failed login towards WHMCS's ban of the gateway's address (three).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { fromBackend } from '../../src/http/problems.js';
import type { UpstreamOutcome } from '../../src/upstream/observer.js';
import { createWhmcsClient } from '../../mappings/whmcs/client.js';
import { rejectsWith, testConfig } from '../mappings/whmcs/fake-whmcs.js';

t.test('a refusal holds the calls that were waiting for the one connection', async (t) => {
  const logins: string[] = [];
  // A fake WHMCS with a wrong secret configured: every call is a failed login, answered as WHMCS does.
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      logins.push(new URLSearchParams(Buffer.concat(chunks).toString('utf8')).get('action') ?? '');
      response.writeHead(403, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ result: 'error', message: 'Authentication Failed' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const outcomes: UpstreamOutcome[] = [];
  const observer = {
    called: (_action: string, outcome: UpstreamOutcome) => void outcomes.push(outcome),
    cacheLookup: () => undefined,
    coalesced: () => undefined,
    breakerState: () => undefined,
  };
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/whmcs/`;
  const client = createWhmcsClient(testConfig({ url, connections: 1, circuitBreaker: { failureThreshold: 2 } }), { hooks: { observer } });
  t.teardown(() => client.close());

  // Made together: the first takes the only connection, the others wait in the pool's queue.
  const [first, ...queued] = await Promise.allSettled([
    client.call('GetClientsDetails', { clientid: '1' }),
    client.call('GetClientsDetails', { clientid: '2' }),
    client.call('GetInvoices', { userid: '3' }),
    client.call('AddOrder', { clientid: '4' }),
  ]);
  assert.deepEqual(logins, ['GetClientsDetails'], 'one failed login: the queued calls were not sent');
  assert.equal(first?.status, 'rejected');
  for (const settled of queued) {
    const held = await rejectsWith(settled.status === 'rejected' ? Promise.reject(settled.reason) : Promise.resolve(settled.value), 'unavailable');
    assert.equal(held.outcomeUnknown, false, 'not sent: a write among them is known not to have run');
    const problem = fromBackend(held);
    assert.equal(problem.status, 503);
    assert.equal(problem.reason, 'upstream_unavailable');
    assert.ok(Number(problem.headers['retry-after']) >= 1, 'with the hold left as Retry-After');
  }
  assert.deepEqual(outcomes.filter((outcome) => outcome === 'credential_hold').length, 3, `counted as held (${outcomes.join(', ')})`);

  // Held calls are no sign that WHMCS is down: the breaker did not open on them, and the next call is held, not refused by it.
  const next = await rejectsWith(client.call('GetClientsDetails', { clientid: '5' }), 'unavailable');
  assert.equal(next.name, 'CredentialHoldError');
  assert.equal(logins.length, 1);
});
