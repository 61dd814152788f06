/**
 * FOSSBilling 0.6.x and 0.7.x compute a client's balance with RedBean's getCell over
 * `SELECT SUM(amount) … WHERE client_id = ? GROUP BY client_id` (src/modules/Client/Service.php@0.7.2
 * getClientBalance): a client with no balance rows (never credited, never paid from credit) gets
 * `balance: null` from client/get. The mapping reads client/get for every customer call.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { backendWith, CTX, CUSTOMER, FakeCall } from './fake-call.js';
import * as answers from './fixtures/answers.js';
import { call } from '../../helpers/http.js';
import { gatewayBehindRewrites } from '../../helpers/fossbilling-rewriting-proxy.js';

// src/modules/Client/Service.php@0.7.2 toApiArray($client, deep: true, Admin): RedBean row values are strings.
const client072 = { ...answers.client, id: '1', balance: null };

t.test('a 0.6/0.7 client without balance rows (balance: null)', async (t) => {
  const fake = () => new FakeCall().answer('client/get', client072);

  t.test('GET /v1/me still answers', async () => {
    const account = await backendWith(fake()).getAccount(CUSTOMER, CTX);
    assert.equal(account.email, 'ada@example.com');
  });

  t.test('GET /v1/billing/balance answers no credit', async () => {
    assert.deepEqual(await backendWith(fake()).getBalance(CUSTOMER, CTX), { credit: { amount: '0.00', currency: 'USD' } });
  });
});

t.test('through the app: a 0.7.x FOSSBilling answering balance: null', async (t) => {
  const gateway = await gatewayBehindRewrites({ 'client/get': (result: Record<string, unknown>) => ({ ...result, id: String(result.id), balance: null }) });
  t.teardown(() => gateway.close());
  const key = gateway.keys['acme:all'];
  const me = await call(gateway.base, 'GET', '/v1/me', { key });
  assert.equal(me.status, 200, me.text);
  const balance = await call(gateway.base, 'GET', '/v1/billing/balance', { key });
  assert.equal(balance.status, 200, balance.text);
  assert.equal(balance.json().credit.amount, '0.00');
  const services = await call(gateway.base, 'GET', '/v1/services', { key });
  assert.equal(services.status, 200, services.text);
});
