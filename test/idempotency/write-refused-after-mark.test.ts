/**
 * A write whose connection is refused, or that the open circuit breaker turns away, after its
 * write-ahead mark: nothing reached the upstream, so the client's retry with the same key runs it.
 * It was remembered as "outcome unknown": the retry waited out the settle time (409), then a power
 * action answered 503 outcome_unknown for good ("may have taken effect"), though it never left.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createFossbillingBackend } from '../../mappings/fossbilling/backend.js';
import { FossbillingConfigSchema } from '../../mappings/fossbilling/config.js';
import { createFossbillingSeed, startFossbillingSimulator } from '../../simulators/fossbilling/server.js';
import { startWhmcsSimulator } from '../../simulators/whmcs/server.js';
import { bearer, buildTestGateway, postAsAcme } from '../helpers/gateway.js';
import { startRefusingProxy } from '../helpers/refusing-proxy.js';


t.test('WHMCS: a reboot whose connection is refused after its checks is run by the retry with the same key', async (t) => {
  const simulator = await startWhmcsSimulator();
  const proxy = await startRefusingProxy(simulator.url);
  const gw = await buildTestGateway({ simulator, whmcs: { url: proxy.url } });
  t.teardown(async () => {
    await gw.close();
    await proxy.close();
    await simulator.close();
  });

  proxy.refuseAfter(['GetClientsProducts', 'GetClientsDetails', 'GetCancelledPackages', 'GetProducts']);
  const first = await postAsAcme(gw, '/v1/services/1/actions', 'refused-reboot-1', { action: 'reboot' });
  assert.equal(first.statusCode, 503, first.body);
  assert.equal(first.json().reason, 'upstream_unavailable');
  assert.ok(!proxy.forwarded.includes('ModuleCustom'), 'the reboot never reached WHMCS');

  await proxy.reopen();
  const retry = await postAsAcme(gw, '/v1/services/1/actions', 'refused-reboot-1', { action: 'reboot' });
  assert.equal(retry.statusCode, 200, retry.body);
  assert.equal(proxy.forwarded.filter((name) => name === 'ModuleCustom').length, 1, 'sent once, by the retry');
});

t.test('WHMCS: a reboot the breaker turns away after its checks is run by the retry with the same key', async (t) => {
  const simulator = await startWhmcsSimulator();
  const proxy = await startRefusingProxy(simulator.url);
  const gw = await buildTestGateway({ simulator, whmcs: { url: proxy.url, circuitBreaker: { failureThreshold: 1, openMs: 1_000 } } });
  t.teardown(async () => {
    await gw.close();
    await proxy.close();
    await simulator.close();
  });
  const reads = ['GetClientsProducts', 'GetClientsDetails', 'GetCancelledPackages', 'GetProducts'];

  // B's checks take a while (its service read is held back); meanwhile A's write is refused and
  // opens the breaker (one down-signal). The proxy stops listening once B's held read is answered:
  // its other checks must have been answered before that is asked (else the proxy waits for them).
  const held = 'GetClientsProducts';
  simulator.inject({ action: held, kind: 'latency', ms: 1_500, times: 1 });
  const pendingB = postAsAcme(gw, '/v1/services/1/actions', 'breaker-b', { action: 'stop' });
  const others = reads.filter((name) => name !== held);
  for (let waited = 0; !(proxy.forwarded.includes(held) && others.every((name) => proxy.answered.includes(name))); waited += 10) {
    if (waited > 5_000) assert.fail('B\'s checks were not sent');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.ok(!proxy.answered.includes(held), 'B\'s held read is still on its way');
  proxy.refuseAfter([held]);
  assert.equal((await postAsAcme(gw, '/v1/services/1/actions', 'breaker-a', { action: 'reboot' })).statusCode, 503);
  const first = await pendingB;
  assert.equal(first.statusCode, 503, first.body);
  assert.equal(first.json().reason, 'upstream_unavailable');
  assert.ok(!proxy.forwarded.includes('ModuleCustom'), 'neither write reached WHMCS');

  await proxy.reopen();
  await new Promise((resolve) => setTimeout(resolve, 1_050));
  // One trial call closes the breaker (a request's concurrent checks would be turned away meanwhile).
  assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(gw.keys['acme:all']) })).statusCode, 200);
  const retry = await postAsAcme(gw, '/v1/services/1/actions', 'breaker-b', { action: 'stop' });
  assert.equal(retry.statusCode, 200, retry.body);
  assert.equal(proxy.forwarded.filter((name) => name === 'ModuleCustom').length, 1, 'sent once, by the retry');
});

t.test('FOSSBilling: an order whose order/create connection is refused is placed by the retry at once, once', async (t) => {
  const sim = await startFossbillingSimulator({ seed: createFossbillingSeed });
  const proxy = await startRefusingProxy(sim.url);
  const gw = await buildTestGateway({ backend: createFossbillingBackend(FossbillingConfigSchema.parse({ url: proxy.url, apiToken: sim.apiToken })) });
  t.teardown(async () => {
    await gw.close();
    await proxy.close();
    await sim.close();
  });
  const order = { product_id: '2', billing_cycle: 'onetime' };
  const before = sim.state.orders.length;
  proxy.refuseAfter(['product/get_list', 'client/get']);
  const first = await postAsAcme(gw, '/v1/orders', 'refused-order-1', order);
  assert.equal(first.statusCode, 503, first.body);
  assert.equal(first.json().reason, 'upstream_unavailable');
  assert.equal(sim.state.orders.length, before, 'nothing was ordered');

  await proxy.reopen();
  const retry = await postAsAcme(gw, '/v1/orders', 'refused-order-1', order);
  assert.equal(retry.statusCode, 201, retry.body);
  assert.equal(sim.state.orders.length, before + 1);
  const replay = await postAsAcme(gw, '/v1/orders', 'refused-order-1', order);
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.equal(sim.state.orders.length, before + 1);
});

t.test('FOSSBilling: an order/create its staff permission refuses (FOSSBilling checks it before the call runs) leaves the key free: the retry asks again', async (t) => {
  const sim = await startFossbillingSimulator({ seed: createFossbillingSeed, deniedMethods: ['order/create'] });
  const gw = await buildTestGateway({ backend: createFossbillingBackend(FossbillingConfigSchema.parse({ url: sim.url, apiToken: sim.apiToken })) });
  t.teardown(async () => {
    await gw.close();
    await sim.close();
  });
  const order = { product_id: '2', billing_cycle: 'onetime' };
  const before = sim.state.orders.length;
  const first = await postAsAcme(gw, '/v1/orders', 'refused-permission-1', order);
  assert.equal(first.statusCode, 502, first.body);
  const retry = await postAsAcme(gw, '/v1/orders', 'refused-permission-1', order);
  assert.equal(retry.statusCode, 502, `asked again and refused again, not held as an unknown outcome: ${retry.body}`);
  assert.equal(retry.headers['idempotent-replayed'], undefined);
  assert.equal(sim.state.orders.length, before, 'nothing was ordered');
});
