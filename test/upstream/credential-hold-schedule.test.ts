/**
 * The credential hold's schedule as the README gives it ("5 s, then twice as long after each further
 * refusal, up to 5 minutes"), and calls that were already on their way when the first refusal came
 * back: they neither lengthen the hold nor log another. A call after the hold's end is sent, however
 * long after. WHMCS answers "IP Banned" here, which is no failed login: failed logins hold until
 * WHMCS forgets them once the next would ban (credential-hold-ban.test.ts).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createWhmcsClient } from '../../mappings/whmcs/client.js';
import { FakeWhmcs, rejectsWith, testConfig } from '../mappings/whmcs/fake-whmcs.js';

t.test('WHMCS credential hold', async (t) => {
  let whmcs: FakeWhmcs;
  let clock: number;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
    clock = 1_700_000_000_000;
    whmcs.answer('GetClientsDetails', { result: 'error', message: 'IP Banned' }, { status: 403 });
  });
  t.afterEach(() => whmcs.close());
  const client = () => createWhmcsClient(testConfig(), { dispatcher: whmcs.agent, logger: whmcs.logger, now: () => clock });
  const holdLines = () => whmcs.logs.filter((line) => /refused the gateway's credentials/.test(line.msg));

  t.test('holds for 5 s, then twice as long after each refusal, at most 5 minutes', async () => {
    const gateway = client();
    const holds: number[] = [];
    for (let round = 0; round < 9; round += 1) {
      await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'upstream_error');
      const held = await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'unavailable');
      holds.push(held.retryAfterMs ?? 0);
      clock += held.retryAfterMs ?? 0;
    }
    assert.deepEqual(holds, [5, 10, 20, 40, 80, 160, 300, 300, 300].map((seconds) => seconds * 1000));
    assert.equal(whmcs.requests().length, 9, 'one call sent per hold');
  });

  t.test('a call that comes a while after the hold ended is sent', async () => {
    const gateway = client();
    await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'upstream_error');
    clock += 60_000;
    await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'upstream_error');
    assert.equal(whmcs.requests().length, 2, 'not held past the hold');
  });

  t.test('calls in flight together, all refused: one hold of the first length, logged once', async () => {
    const gateway = client();
    await Promise.all([1, 2, 3].map((id) => rejectsWith(gateway.call('GetClientsDetails', { clientid: String(id) }), 'upstream_error')));
    assert.equal(whmcs.requests().length, 3);
    const held = await rejectsWith(gateway.call('GetClientsDetails', { clientid: '4' }), 'unavailable');
    assert.equal(held.retryAfterMs, 5_000);
    assert.equal(holdLines().length, 1);
  });
});
