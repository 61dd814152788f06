/**
 * WHMCS bans the gateway's address after three failed logins, each within 30 minutes of the one
 * before (Auth.php failedLogin; the count restarts after 30 minutes without one). The credential
 * hold never makes the third: after the second it holds every call until WHMCS has forgotten them
 * (30 minutes and a margin), counting refusals of calls that were already on their way, and
 * successes in between do not reset the count (WHMCS does not). "IP Banned" is not a failed login
 * (refused before the credentials are read). The in-gateway doctor shares the gateway's hold: its
 * credentials probe is one more login.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createWhmcsClient } from '../../mappings/whmcs/client.js';
import { createWhmcsBackend } from '../../mappings/whmcs/backend.js';
import { FakeWhmcs, rejectsWith, testConfig } from '../mappings/whmcs/fake-whmcs.js';
import * as answers from '../mappings/whmcs/fixtures/answers.js';

const MINUTE = 60_000;
const BAN_CLEAR_MS = 31 * MINUTE;
const banned = { result: 'error', message: 'IP Banned' };

t.test('the credential hold against WHMCS\'s ban', async (t) => {
  let whmcs: FakeWhmcs;
  let clock: number;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
    clock = 1_700_000_000_000;
  });
  t.afterEach(() => whmcs.close());
  const client = () => createWhmcsClient(testConfig(), { dispatcher: whmcs.agent, logger: whmcs.logger, now: () => clock });
  const sent = () => whmcs.requests().length;
  const refuse = (answer: object = answers.refusals.auth) => whmcs.answer('GetClientsDetails', answer, { status: 403 });

  t.test('after two failed logins, calls are held until WHMCS forgets them: never a third within 30 minutes', async () => {
    refuse();
    const gateway = client();
    await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'upstream_error');
    const first = await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'unavailable');
    assert.equal(first.retryAfterMs, 5_000, 'the first refusal holds 5 s');
    clock += 5_000;
    await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'upstream_error');
    const second = await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'unavailable');
    assert.equal(second.retryAfterMs, BAN_CLEAR_MS, 'the second holds past WHMCS\'s 30 minutes');
    for (let minute = 1; minute <= 30; minute += 1) {
      clock += MINUTE;
      await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'unavailable');
    }
    assert.equal(sent(), 2, 'no third failed login within 30 minutes of the second');
    clock += MINUTE;
    await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'upstream_error');
    assert.equal(sent(), 3, 'sent again once WHMCS has forgotten the two');
    const again = await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'unavailable');
    assert.ok((again.retryAfterMs ?? 0) < MINUTE, 'a first failed login again: a short hold');
    const banLines = whmcs.logs.filter((line) => /one more would ban/.test(line.msg));
    assert.equal(banLines.length, 1, 'the long hold is logged once, saying why');
    assert.match(banLines[0]?.msg ?? '', /2 times.*31 min/);
  });

  t.test('calls already on their way when the first refusal came count too: two refused together hold long at once', async () => {
    refuse();
    const gateway = client();
    await Promise.all([1, 2].map((id) => rejectsWith(gateway.call('GetClientsDetails', { clientid: String(id) }), 'upstream_error')));
    assert.equal(sent(), 2);
    const held = await rejectsWith(gateway.call('GetClientsDetails', { clientid: '3' }), 'unavailable');
    assert.equal(held.retryAfterMs, BAN_CLEAR_MS);
  });

  t.test('a success in between does not reset the count', async () => {
    const gateway = client();
    const once = { status: 403, times: 1 };
    whmcs.answer('GetClientsDetails', answers.refusals.auth, once).answer('GetClientsDetails', answers.clientDetails, { times: 1 });
    whmcs.answer('GetClientsDetails', answers.refusals.auth, once);
    await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'upstream_error');
    clock += 5_000;
    await gateway.call('GetClientsDetails', { clientid: '2' });
    await rejectsWith(gateway.call('GetClientsDetails', { clientid: '3' }), 'upstream_error');
    const held = await rejectsWith(gateway.call('GetClientsDetails', { clientid: '4' }), 'unavailable');
    assert.equal(held.retryAfterMs, BAN_CLEAR_MS);
  });

  t.test('"IP Banned" is not a failed login: the hold only grows', async () => {
    refuse(banned);
    const gateway = client();
    const holds: number[] = [];
    for (let round = 0; round < 4; round += 1) {
      await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'upstream_error');
      const held = await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'unavailable');
      holds.push(held.retryAfterMs ?? 0);
      clock += held.retryAfterMs ?? 0;
    }
    assert.deepEqual(holds, [5_000, 10_000, 20_000, 40_000]);
  });

  t.test('the in-gateway doctor waits out the gateway\'s hold, and its refusal counts towards the same ban', async () => {
    whmcs.answer('GetCurrencies', answers.refusals.auth, { status: 403 });
    const backend = createWhmcsBackend(testConfig(), { dispatcher: whmcs.agent, logger: whmcs.logger, now: () => clock });
    const credentials = async () => (await backend.diagnose!({ serviceActions: [] })).find((check) => check.id === 'credentials');
    assert.equal(await backend.ping(), false, 'the gateway\'s own call is refused: the first failed login');
    assert.equal(sent(), 1);
    const held = await credentials();
    assert.equal(sent(), 1, 'the doctor\'s probe waits out the gateway\'s hold');
    assert.equal(held?.status, 'fail');
    assert.match(held?.detail ?? '', /not sent: the gateway holds its calls/);
    clock += 5_000;
    assert.equal((await credentials())?.status, 'fail');
    assert.equal(sent(), 2, 'the hold over, the doctor\'s probe is sent: the second failed login');
    assert.equal(await backend.ping(), false);
    assert.equal(sent(), 2, 'and the gateway holds its own calls until WHMCS forgets both');
    await backend.close();
  });
});
