/** The v1 passthrough's check of the record answered: answers about the record asked for pass, whatever their shape. */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, type PassthroughGateway, SERVICE } from './harness.js';

const PRODUCT = { id: '7', name: 'VPS S', description: '', type: 'server', pay_type: 'recurring', prices: [], config_options: [] };

t.test('v1 passthrough: legitimate answers about the record asked for', async (t) => {
  let gw: PassthroughGateway;
  t.before(async () => {
    gw = await buildPassthroughGateway();
  });
  t.teardown(() => gw.close());

  t.test('credentials, product, action results 200/202 of the record asked for pass; another service\'s action result is 502', async () => {
    const acme = bearer(gw.keys['acme:all']);
    gw.upstream.answer(json(200, { service_id: '7', username: 'u', password: null, hostname: null, ip_addresses: [] }));
    assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/services/7/credentials', headers: acme })).statusCode, 200);
    gw.upstream.answer(json(200, PRODUCT));
    assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/products/7', headers: acme })).statusCode, 200);
    let n = 0;
    for (const [status, body, expected] of [
      [200, { action: 'reboot', outcome: 'completed', effective_on: null, service: SERVICE }, 200],
      [202, { action: 'cancel', outcome: 'scheduled', effective_on: '2026-02-01', service: SERVICE }, 202],
      [200, { action: 'reboot', outcome: 'completed', effective_on: null, service: { ...SERVICE, id: '8' } }, 502],
    ] as const) {
      gw.upstream.answer(json(status, body));
      const response = await gw.app.inject({ method: 'POST', url: '/v1/services/7/actions', headers: { ...acme, 'idempotency-key': `sanity-${n++}` }, payload: { action: body.action } });
      assert.equal(response.statusCode, expected, response.body);
    }
  });
});
