import assert from 'node:assert/strict';
import t from 'tap';
import { PROFILE_ACTIONS } from '../../../src/v1/schemas.js';
import { FossbillingConfigSchema } from '../../../mappings/fossbilling/config.js';
import { diagnoseFossbilling } from '../../../mappings/fossbilling/doctor.js';
import { startFossbillingSimulator } from '../../../simulators/fossbilling/server.js';
import { createFossbillingSeed } from '../../../simulators/fossbilling/state.js';

const WRITES = ['order/create', 'order/suspend', 'order/unsuspend', 'order/cancel'];

async function diagnose(options: { deniedMethods?: string[]; missingMethods?: string[]; token?: string; profile?: 'A' | 'B'; upstreamCurrency?: string } = {}) {
  const seed = { ...createFossbillingSeed(), defaultCurrency: options.upstreamCurrency ?? 'USD' };
  const sim = await startFossbillingSimulator({ deniedMethods: options.deniedMethods ?? [], missingMethods: options.missingMethods ?? [], seed });
  try {
    const config = FossbillingConfigSchema.parse({ url: sim.url, apiToken: options.token ?? sim.apiToken });
    const before = structuredClone(sim.state);
    const checks = await diagnoseFossbilling(config, { serviceActions: PROFILE_ACTIONS[options.profile ?? 'B'] });
    // Probes use ids FOSSBilling does not have: nothing upstream changed.
    assert.deepEqual(sim.state, before);
    return { checks: new Map(checks.map((check) => [check.id, check])), calls: sim.calls.map((call) => call.method) };
  } finally {
    await sim.close();
  }
}

t.test('FOSSBilling doctor', async (t) => {
  t.test('passes on a correct setup, probing every write used without acting', async () => {
    const { checks, calls } = await diagnose();
    assert.equal(checks.get('credentials')?.status, 'pass');
    assert.equal(checks.get('permissions')?.status, 'pass');
    assert.equal(checks.get('order-key-search')?.status, 'pass');
    assert.equal(checks.get('default-currency')?.status, 'pass');
    for (const method of ['order/create', 'order/suspend', 'order/unsuspend']) assert.ok(calls.includes(method), method);
    assert.equal(calls.filter((method) => WRITES.includes(method)).length, 3);
  });

  t.test('names the methods the staff member may not call, and blocks orders when the key search is denied', async () => {
    const { checks } = await diagnose({ deniedMethods: ['order/get_list', 'order/suspend'] });
    assert.equal(checks.get('permissions')?.status, 'fail');
    assert.match(checks.get('permissions')?.detail ?? '', /order\/get_list \(denied\).*order\/suspend \(denied\)/);
    assert.equal(checks.get('order-key-search')?.status, 'fail');
    assert.deepEqual(checks.get('order-key-search')?.blocks, ['orders']);
  });

  t.test('names the methods this FOSSBilling does not have (error 740), which it had counted as allowed', async () => {
    const { checks } = await diagnose({ missingMethods: ['order/service'] });
    assert.equal(checks.get('permissions')?.status, 'fail');
    assert.match(checks.get('permissions')?.detail ?? '', /order\/service \(missing\)/);
    assert.match(checks.get('permissions')?.fix ?? '', /does not exist in this FOSSBilling/);
  });

  t.test('fails the credentials and skips what depends on them, without the token in any text', async () => {
    const { checks } = await diagnose({ token: 'wrong-token-value' });
    assert.equal(checks.get('credentials')?.status, 'fail');
    assert.equal(checks.get('permissions')?.status, 'skip');
    assert.equal(checks.get('order-key-search')?.status, 'skip');
    assert.equal(JSON.stringify([...checks.values()]).includes('wrong-token-value'), false);
  });

  t.test('warns about the profile\'s actions FOSSBilling cannot carry out', async () => {
    const { checks } = await diagnose({ profile: 'A' });
    assert.equal(checks.get('service-actions')?.status, 'warn');
    assert.match(checks.get('service-actions')?.detail ?? '', /start, stop, reboot/);
  });

  t.test("fails when FOSSBilling's default currency is not the one the catalog is labelled with, and names it", async () => {
    const { checks } = await diagnose({ upstreamCurrency: 'EUR' });
    const check = checks.get('default-currency');
    assert.equal(check?.status, 'fail');
    assert.match(check?.detail ?? '', /default currency is EUR, but the gateway labels every catalog price USD/);
    assert.equal(check?.fix, 'Set upstream.fossbilling.defaultCurrency to "EUR".');
  });

  t.test('warns, without failing, when the staff member may not view currencies', async () => {
    const { checks } = await diagnose({ deniedMethods: ['currency/get_default'], upstreamCurrency: 'EUR' });
    assert.equal(checks.get('default-currency')?.status, 'warn');
    assert.equal(checks.get('permissions')?.status, 'pass', 'currency view is not a permission the gateway needs');
  });
});
