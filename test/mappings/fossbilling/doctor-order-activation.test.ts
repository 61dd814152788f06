/**
 * `doctor` warns of the products whose orders placed through the gateway are paid but never set
 * up: priced, set up after payment (FOSSBilling's default), with activateOrders off. The invoice
 * admin order/create issues has a line of task renew (Invoice/Service.php generateForOrder), which
 * fails on an order never activated (failed_renew; FOSSBilling#2693) instead of activating it.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { PROFILE_ACTIONS } from '../../../src/v1/schemas.js';
import { FossbillingConfigSchema } from '../../../mappings/fossbilling/config.js';
import { diagnoseFossbilling } from '../../../mappings/fossbilling/doctor.js';
import { startFossbillingSimulator } from '../../../simulators/fossbilling/server.js';

async function activationCheck(settings: Record<string, unknown> = {}) {
  const sim = await startFossbillingSimulator({});
  try {
    const config = FossbillingConfigSchema.parse({ url: sim.url, apiToken: sim.apiToken, ...settings });
    const checks = await diagnoseFossbilling(config, { serviceActions: PROFILE_ACTIONS.B });
    return checks.find((check) => check.id === 'order-activation');
  } finally {
    await sim.close();
  }
}

t.test('names the priced products set up after payment, and the remedies', async () => {
  const check = await activationCheck();
  assert.equal(check?.status, 'warn');
  // The seed sells 1 (recurrent) and 2 (once), both after_payment; 3 is hidden, 4 free.
  assert.match(check?.detail ?? '', /1 \(Shared Hosting Starter\), 2 \(Setup Service\) are not set up/);
  assert.doesNotMatch(check?.detail ?? '', /Internal Plan|Trial/);
  assert.match(check?.fix ?? '', /after_order/);
  assert.match(check?.fix ?? '', /activateOrders/);
  assert.match(check?.fix ?? '', /staff/);
});

t.test('passes when the gateway activates every order', async () => {
  assert.equal((await activationCheck({ activateOrders: true }))?.status, 'pass');
});

t.test('looks only at the allow-listed products when there is a list', async () => {
  const check = await activationCheck({ publicProductIds: ['2', '4'] });
  assert.equal(check?.status, 'warn');
  assert.doesNotMatch(check?.detail ?? '', /Shared Hosting Starter/);
});

t.test('a product that costs only its setup fee is priced too: named', async () => {
  const sim = await startFossbillingSimulator({});
  try {
    sim.state.products.push({
      id: 9,
      type: 'custom',
      title: 'Setup only',
      description: 'A one-time setup fee',
      status: 'enabled',
      hidden: false,
      payment: { type: 'once', once_price: '0.00', once_setup_price: '5.00', periods: {} },
    });
    const config = FossbillingConfigSchema.parse({ url: sim.url, apiToken: sim.apiToken });
    const check = (await diagnoseFossbilling(config, { serviceActions: PROFILE_ACTIONS.B })).find((each) => each.id === 'order-activation');
    assert.match(check?.detail ?? '', /9 \(Setup only\)/);
  } finally {
    await sim.close();
  }
});
