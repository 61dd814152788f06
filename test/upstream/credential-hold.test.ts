/**
 * WHMCS answers a wrong API secret with HTTP 403 `{"result":"error","message":"Authentication Failed"}`
 * and bans the source address after three failed logins (15 minutes by default; "IP Banned" then).
 * After such a refusal the client holds every call to WHMCS for a short, growing while, answered 503
 * `upstream_unavailable` with Retry-After and nothing sent, instead of failing each request's login.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { fromBackend } from '../../src/http/problems.js';
import type { UpstreamOutcome } from '../../src/upstream/observer.js';
import { createWhmcsClient } from '../../mappings/whmcs/client.js';
import { FakeWhmcs, rejectsWith, testConfig } from '../mappings/whmcs/fake-whmcs.js';
import * as answers from '../mappings/whmcs/fixtures/answers.js';

t.test('WHMCS client after a refusal of its credentials', async (t) => {
  let whmcs: FakeWhmcs;
  let clock: number;
  let outcomes: UpstreamOutcome[];
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
    clock = 1_700_000_000_000;
    outcomes = [];
  });
  t.afterEach(() => whmcs.close());

  const observer = {
    called: (_action: string, outcome: UpstreamOutcome) => void outcomes.push(outcome),
    cacheLookup: () => undefined,
    coalesced: () => undefined,
    breakerState: () => undefined,
  };
  const client = () => createWhmcsClient(testConfig(), { dispatcher: whmcs.agent, logger: whmcs.logger, now: () => clock, hooks: { observer } });
  const sent = () => whmcs.requests().length;

  t.test('holds every call, unsent, for a growing while, and logs each hold once', async () => {
    whmcs.answer('GetClientsDetails', answers.refusals.auth, { status: 403 });
    const gateway = client();
    const refused = await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'upstream_error');
    assert.match(refused.operatorMessage ?? '', /Authentication Failed/);

    const held = await rejectsWith(gateway.call('GetClientsDetails', { clientid: '2' }), 'unavailable');
    await rejectsWith(gateway.call('AddOrder', { clientid: '2' }), 'unavailable');
    assert.equal(sent(), 1, 'held calls are not sent');
    assert.equal(held.outcomeUnknown, false);
    const firstHoldMs = held.retryAfterMs ?? 0;
    assert.ok(firstHoldMs >= 1_000, `a Retry-After of at least a second (${firstHoldMs})`);
    const problem = fromBackend(held);
    assert.equal(problem.status, 503);
    assert.equal(problem.reason, 'upstream_unavailable');
    assert.equal(problem.headers['retry-after'], String(Math.ceil(firstHoldMs / 1000)));
    assert.ok(outcomes.includes('credential_hold'), `held calls are counted as such (${outcomes.join(', ')})`);

    clock += firstHoldMs;
    await rejectsWith(gateway.call('GetClientsDetails', { clientid: '3' }), 'upstream_error');
    assert.equal(sent(), 2, 'sent again once the hold is over');
    const longer = await rejectsWith(gateway.call('GetClientsDetails', { clientid: '3' }), 'unavailable');
    assert.ok((longer.retryAfterMs ?? 0) > firstHoldMs, 'a second refusal holds longer');

    const holdLines = whmcs.logs.filter((line) => /credentials/.test(line.msg));
    assert.equal(holdLines.length, 2, 'one line per hold, none per held call');
    assert.equal(holdLines[0]?.level, 'error');
    assert.ok(!JSON.stringify(whmcs.logs).includes(testConfig().secret), 'no secret in the log');
  });

  t.test('an "IP Banned" refusal holds the calls too', async () => {
    whmcs.answer('GetClientsDetails', { result: 'error', message: 'IP Banned' }, { status: 403 });
    const gateway = client();
    await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'upstream_error');
    await rejectsWith(gateway.call('GetClientsDetails', { clientid: '2' }), 'unavailable');
    assert.equal(sent(), 1);
  });

  t.test('an answer after the hold ends it: the next refusal holds for the first while again', async () => {
    // "IP Banned" (a ban lifted, then another): failed logins would hold longer (credential-hold-ban.test.ts).
    const banned = { result: 'error', message: 'IP Banned' };
    whmcs.answer('GetClientsDetails', banned, { status: 403, times: 1 });
    whmcs.answer('GetClientsDetails', answers.clientDetails, { times: 1 });
    whmcs.answer('GetClientsDetails', banned, { status: 403, times: 1 });
    const gateway = client();
    await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'upstream_error');
    const first = await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'unavailable');
    clock += first.retryAfterMs ?? 0;
    await gateway.call('GetClientsDetails', { clientid: '1' }, { freshness: 'uncached' });
    await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }, { freshness: 'uncached' }), 'upstream_error');
    const again = await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'unavailable');
    assert.equal(again.retryAfterMs, first.retryAfterMs);
  });

  t.test('refusals that feed no ban and concern one action or the allow-list hold nothing', async () => {
    whmcs.answer('ModuleCustom', answers.refusals.permission, { status: 403 });
    whmcs.answer('GetClientsDetails', answers.refusals.ip, { status: 403 });
    const gateway = client();
    await rejectsWith(gateway.call('ModuleCustom', { serviceid: '1', func_name: 'reboot' }), 'upstream_error');
    await rejectsWith(gateway.call('GetClientsDetails', { clientid: '1' }), 'upstream_error');
    await rejectsWith(gateway.call('GetClientsDetails', { clientid: '2' }), 'upstream_error');
    assert.equal(sent(), 3);
  });
});
