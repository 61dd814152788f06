/**
 * The processes of a cluster (WORKERS) reach WHMCS from one address, and WHMCS bans the address:
 * a failed login one worker meets is told to the others (through the primary: FailedLoginPeers),
 * which hold their calls and count it as their own. Two workers with a wrong secret make two failed
 * logins together, not two each.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createWhmcsClient } from '../../mappings/whmcs/client.js';
import type { FailedLoginPeers } from '../../src/upstream/observer.js';
import { FakeWhmcs, rejectsWith, testConfig } from '../mappings/whmcs/fake-whmcs.js';
import * as answers from '../mappings/whmcs/fixtures/answers.js';

/** Peers for `count` processes: what one tells, every other hears (as the cluster primary passes it on). */
function cluster(count: number): FailedLoginPeers[] {
  const hearers: Array<Array<(label: string) => void>> = Array.from({ length: count }, () => []);
  return hearers.map((own, index) => ({
    tell: (label) => hearers.forEach((each, other) => other !== index && each.forEach((hear) => hear(label))),
    listen: (hear) => void own.push(hear),
  }));
}

t.test('failed logins shared by the workers of a cluster', async (t) => {
  let whmcs: FakeWhmcs;
  let clock: number;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
    clock = 1_700_000_000_000;
  });
  t.afterEach(() => whmcs.close());
  const worker = (peers: FailedLoginPeers) =>
    createWhmcsClient(testConfig(), { dispatcher: whmcs.agent, logger: whmcs.logger, now: () => clock, hooks: { failedLoginPeers: peers } });
  const sent = () => whmcs.requests().length;
  const call = (client: ReturnType<typeof worker>) => client.call('GetClientsDetails', { clientid: '1' });

  t.test('one worker refused: the other holds too; the second failed login holds both until WHMCS forgets', async () => {
    whmcs.answer('GetClientsDetails', answers.refusals.auth, { status: 403 });
    const [a, b] = cluster(2).map(worker) as [ReturnType<typeof worker>, ReturnType<typeof worker>];
    await rejectsWith(call(a), 'upstream_error');
    const held = await rejectsWith(call(b), 'unavailable');
    assert.equal(sent(), 1, 'the other worker sent nothing');
    assert.equal(held.retryAfterMs, 5_000);
    clock += 5_000;
    await rejectsWith(call(b), 'upstream_error');
    assert.equal(sent(), 2);
    for (const each of [a, b]) {
      const long = await rejectsWith(call(each), 'unavailable');
      assert.equal(long.retryAfterMs, 31 * 60_000, 'both hold until WHMCS forgets the two');
    }
    clock += 30 * 60_000;
    await Promise.all([a, b].map((each) => rejectsWith(call(each), 'unavailable')));
    assert.equal(sent(), 2, 'no third failed login from either');
  });

  t.test('"IP Banned" is not told: it is no failed login', async () => {
    whmcs.answer('GetClientsDetails', { result: 'error', message: 'IP Banned' }, { status: 403 });
    const [a, b] = cluster(2).map(worker) as [ReturnType<typeof worker>, ReturnType<typeof worker>];
    await rejectsWith(call(a), 'upstream_error');
    await rejectsWith(call(b), 'upstream_error');
    assert.equal(sent(), 2);
  });
});
