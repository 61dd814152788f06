/**
 * A WHMCS configurable option's choice costs what its pricing says, negative amounts included:
 * getCartConfigOptions (includes/configoptionsfunctions.php) takes `$data3[$cycle]` and the cycle's
 * setup fee as they are, and calcCartTotals adds them to the order, so a "-2.00" choice (a discount
 * for leaving something out) is billed -2.00. "-1.00 = disabled" is a rule of product pricing only.
 * The catalog must quote what the order will bill, not drop the price or turn the fee into 0.00.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { ProductSchema } from '../../../src/v1/schemas.js';
import { CTX, FakeWhmcs } from './fake-whmcs.js';
import * as answers from './fixtures/answers.js';

const usd = answers.vpsS.pricing.USD;
const discounted = { ...usd, monthly: '-2.00', annually: '-1.00', msetupfee: '-5.00', asetupfee: '0.00' };

t.test('a choice with a negative price or setup fee is quoted at that amount for every cycle the product offers', async (t) => {
  const whmcs = new FakeWhmcs();
  t.teardown(() => whmcs.close());
  const product = {
    ...answers.vpsS,
    configoptions: {
      configoption: [
        {
          id: 9, name: 'Backups', type: '1', minqty: 0, maxqty: 0,
          options: { option: [{ id: 91, name: 'None', rawName: 'None', recurring: 0, required: '', pricing: { USD: discounted } }] },
        },
      ],
    },
  };
  whmcs.answer('GetProducts', { result: 'success', totalresults: 1, products: { product: [product] } });
  const mapped = ProductSchema.parse(await whmcs.backend().getProduct('1', CTX));
  assert.deepEqual(mapped.config_options[0]?.choices[0]?.prices, [
    { currency: 'USD', billing_cycle: 'monthly', price: '-2.00', setup_fee: '-5.00' },
    { currency: 'USD', billing_cycle: 'annually', price: '-1.00', setup_fee: '0.00' },
  ]);
});

t.test('a choice without a price for a cycle is still not quoted there (never a guessed amount)', async (t) => {
  const whmcs = new FakeWhmcs();
  t.teardown(() => whmcs.close());
  const { annually: _annually, ...withoutAnnual } = usd;
  const product = {
    ...answers.vpsS,
    configoptions: {
      configoption: [
        {
          id: 9, name: 'Backups', type: '1', minqty: 0, maxqty: 0,
          options: { option: [{ id: 91, name: 'Daily', rawName: 'Daily', recurring: 0, required: '', pricing: { USD: { ...withoutAnnual, monthly: '3.00' } } }] },
        },
      ],
    },
  };
  whmcs.answer('GetProducts', { result: 'success', totalresults: 1, products: { product: [product] } });
  const mapped = await whmcs.backend().getProduct('1', CTX);
  assert.deepEqual(mapped.config_options[0]?.choices[0]?.prices, [{ currency: 'USD', billing_cycle: 'monthly', price: '3.00', setup_fee: '0.00' }]);
});
