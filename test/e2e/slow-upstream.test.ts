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

  t.test("the metrics split each answer's time: the upstream's wait, and the gateway's own share", async () => {
    const sum = async (name: string, route: string): Promise<{ count: number; sum: number }> => {
      const text = await gw.app.metrics.registry.metrics();
      const read = (suffix: string) => {
        const line = text.split('\n').find((each) => each.startsWith(`${name}_${suffix}{`) && each.includes(`route="${route}"`) && each.includes('status="200"'));
        return Number(line?.split(' ').at(-1));
      };
      return { count: read('count'), sum: read('sum') };
    };
    // /v1/me makes one upstream call, never cached: each answer waited at least the upstream's 200 ms.
    for (let i = 0; i < 3; i++) assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(gw.keys['acme:all']) })).statusCode, 200);
    const total = await sum('gateway_http_request_duration_seconds', '/v1/me');
    const own = await sum('gateway_http_request_own_duration_seconds', '/v1/me');
    assert.equal(total.count, 3);
    assert.equal(own.count, 3);
    assert.ok(total.sum >= 3 * 0.2, `answered in ${total.sum} s`);
    assert.ok(own.sum >= 0 && own.sum <= total.sum - 3 * 0.2, `own ${own.sum} s of ${total.sum} s: the 3 × 200 ms waited are not the gateway's`);

    // The 200 catalog reads above: the first 100 waited on the one call they shared, the next 100 on none.
    const catalog = await sum('gateway_http_request_duration_seconds', '/v1/products');
    const catalogOwn = await sum('gateway_http_request_own_duration_seconds', '/v1/products');
    assert.equal(catalogOwn.count, 200);
    assert.ok(catalog.sum - catalogOwn.sum >= 100 * 0.2, `${catalog.sum - catalogOwn.sum} s waited in all: the coalesced reads waited too`);
  });
});
