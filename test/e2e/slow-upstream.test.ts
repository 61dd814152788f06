/**
 * In front of a slow upstream (200 ms a call), the catalog costs it one call however many clients
 * ask at once: identical reads in flight are coalesced, and the answer is then served from the
 * mapping's cache. Call counts only: the latency figures are the benchmark's (bench/slow-backend.ts).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { startWhmcsSimulator, type WhmcsSimulator } from '../../simulators/whmcs/server.js';
import { bearer, buildTestGateway, type TestGateway } from '../helpers/gateway.js';

t.test('a slow upstream', async (t) => {
  let simulator: WhmcsSimulator;
  let gw: TestGateway;

  t.before(async () => {
    simulator = await startWhmcsSimulator({ latencyMs: 200 });
    gw = await buildTestGateway({ simulator, config: { doctor: { enabled: false } } });
  });
  t.teardown(async () => {
    await gw.close();
    await simulator.close();
  });

  const productsCalls = () => simulator.calls.filter((call) => call.action.toLowerCase() === 'getproducts').length;
  const readCatalog = (count: number) =>
    Promise.all(Array.from({ length: count }, () => gw.app.inject({ method: 'GET', url: '/v1/products', headers: bearer(gw.keys['acme:all']) })));

  t.test('100 concurrent identical catalog reads make one upstream call, and the next 100 none', async () => {
    const before = productsCalls();
    const first = await readCatalog(100);
    assert.deepEqual([...new Set(first.map((response) => response.statusCode))], [200]);
    assert.equal(new Set(first.map((response) => response.body)).size, 1, 'every client got the same catalog');
    assert.equal(productsCalls() - before, 1, 'one GetProducts for all of them');

    const warm = await readCatalog(100);
    assert.deepEqual([...new Set(warm.map((response) => response.statusCode))], [200]);
    assert.equal(productsCalls() - before, 1, 'served from the cache');
  });
});
