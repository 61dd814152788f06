/**
 * `doctor`'s order-activation check reads each product's `setup` as FOSSBilling's admin API answers
 * it: always present, but from a nullable column (install/sql/structure.sql: `setup varchar(50)
 * DEFAULT 'after_payment'`). A NULL one is activated neither by the cart (only `after_order` is) nor
 * by the gateway (order-placement.ts), so a priced product with it is never set up when paid: named.
 * An `after_order` one is set up at once: not named; with nothing left to name, the check passes.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { PROFILE_ACTIONS } from '../../../src/v1/schemas.js';
import { FossbillingConfigSchema } from '../../../mappings/fossbilling/config.js';
import { diagnoseFossbilling } from '../../../mappings/fossbilling/doctor.js';
import { startFossbillingSimulator } from '../../../simulators/fossbilling/server.js';

t.test('a priced product whose setup is null is named; one set up after the order is not', async () => {
  const sim = await startFossbillingSimulator({});
  try {
    const priced = { type: 'custom', description: 'x', status: 'enabled', hidden: false, payment: { type: 'once', once_price: '9.00', once_setup_price: '0.00', periods: {} } } as const;
    sim.state.products.push({ ...priced, id: 9, title: 'Null setup', setup: null }, { ...priced, id: 10, title: 'At once', setup: 'after_order' });
    const config = FossbillingConfigSchema.parse({ url: sim.url, apiToken: sim.apiToken, publicProductIds: ['9', '10'] });
    const check = (await diagnoseFossbilling(config, { serviceActions: PROFILE_ACTIONS.B })).find((each) => each.id === 'order-activation');
    assert.equal(check?.status, 'warn');
    assert.match(check?.detail ?? '', /Orders placed through the gateway for 9 \(Null setup\) are not set up/);
  } finally {
    await sim.close();
  }
});

t.test('passes when no priced product sold is set up after payment', async () => {
  const sim = await startFossbillingSimulator({});
  try {
    // The seed's 4 is free.
    const config = FossbillingConfigSchema.parse({ url: sim.url, apiToken: sim.apiToken, publicProductIds: ['4'] });
    const check = (await diagnoseFossbilling(config, { serviceActions: PROFILE_ACTIONS.B })).find((each) => each.id === 'order-activation');
    assert.equal(check?.status, 'pass', check?.detail);
  } finally {
    await sim.close();
  }
});
