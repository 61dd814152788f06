/**
 * When a credential hold ends with several requests waiting, one call goes to check the
 * credentials and the others are held until it is answered: each call sent with a wrong secret is
 * a failed login, and WHMCS bans the address after three. Before, every call made as the hold
 * ended went out (as many as the connections), so the ban came at the first hold's end.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { createWhmcsClient } from '../../mappings/whmcs/client.js';
import { rejectsWith, testConfig } from '../mappings/whmcs/fake-whmcs.js';

t.test('one call checks the credentials after a hold; the others wait for its answer', async (t) => {
  let logins = 0;
  let secretFixed = false;
  // A fake WHMCS on a real socket: refuses the secret (as WHMCS does) until it is "fixed" upstream.
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      logins += 1;
      response.writeHead(secretFixed ? 200 : 403, { 'content-type': 'application/json' });
      response.end(JSON.stringify(secretFixed ? { result: 'success', totalresults: 0, currencies: { currency: [] } } : { result: 'error', message: 'Authentication Failed' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  let clock = 1_000_000;
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/whmcs/`;
  const client = createWhmcsClient(testConfig({ url, connections: 4, circuitBreaker: { enabled: false } }), { now: () => clock });
  t.teardown(() => client.close());
  const together = () => Promise.allSettled([1, 2, 3, 4].map(() => client.call('GetCurrencies', {}, { freshness: 'uncached' })));

  await rejectsWith(client.call('GetCurrencies', {}, { freshness: 'uncached' }), 'upstream_error');
  assert.equal(logins, 1);
  clock += 5_000;
  const settled = await together();
  assert.equal(logins, 2, 'four calls made as the hold ended: one sent, the check');
  const held = settled.filter((each) => each.status === 'rejected' && (each.reason as { name?: string }).name === 'CredentialHoldError');
  assert.equal(held.length, 3, 'the others held, not sent');
  const long = await rejectsWith(client.call('GetCurrencies', {}, { freshness: 'uncached' }), 'unavailable');
  assert.equal(long.retryAfterMs, 31 * 60_000, 'the check refused: the second failed login holds until WHMCS forgets');

  secretFixed = true;
  clock += 31 * 60_000;
  const after = await together();
  assert.ok(after.some((each) => each.status === 'fulfilled'), 'the check answered');
  await Promise.all([1, 2, 3].map(() => client.call('GetCurrencies', {}, { freshness: 'uncached' })));
  assert.ok(logins >= 6, 'once a check is answered, calls flow again');
});
