/**
 * POST /v1/orders refuses more than 50 `config_options` (400 invalid_request); the documented
 * OrderInput schema must refuse them too, and still take 50.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { buildTestGateway } from '../helpers/gateway.js';

const options = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, index) => [String(index + 1), 'x']));

t.test('the documented order body refuses what validation refuses: more than 50 options', async (t) => {
  const gw = await buildTestGateway();
  t.teardown(() => gw.close());
  const doc = (await gw.app.inject({ url: '/v1/openapi.json' })).json() as { components: object };
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema({ $id: 'doc', components: doc.components });
  const documented = ajv.compile({ $ref: 'doc#/components/schemas/OrderInput' });

  const tooMany = { product_id: '1', billing_cycle: 'monthly', config_options: options(51) };
  const refused = await gw.app.inject({
    method: 'POST',
    url: '/v1/orders',
    headers: { authorization: `Bearer ${gw.keys['acme:all']}`, 'idempotency-key': 'options-51' },
    payload: tooMany,
  });
  assert.equal(refused.statusCode, 400, refused.body);
  assert.equal(refused.json().reason, 'invalid_request');
  assert.equal(documented(tooMany), false, 'the document refuses 51 options');
  assert.equal(documented({ ...tooMany, config_options: options(50) }), true, 'and takes 50');
});
