/**
 * The ops listener's own requests (probes, scrapes, admin calls, its parser's refusals) were in no
 * metric: `gateway_http_requests_total` counts the public API only, so an operator could see
 * neither failing admin calls nor failing scrapes. They are counted in
 * `gateway_ops_requests_total`, by route template (`unmatched` for unknown paths), method and status,
 * and still not in the public family.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildOpsApp } from '../../src/ops/server.js';
import { buildAdminGateway } from '../admin/helpers.js';
import { buildTestGateway } from '../helpers/gateway.js';
import { rawExchange } from '../helpers/http.js';

const opsLines = (text: string): string[] => text.split('\n').filter((line) => line.startsWith('gateway_ops_requests_total{'));

t.test('probes, scrapes, admin calls and parser refusals on the ops listener are counted in their own family', async (t) => {
  const gw = await buildAdminGateway();
  t.teardown(() => gw.close());
  const port = Number(new URL(await gw.ops.listen({ host: '127.0.0.1', port: 0 })).port);

  assert.equal((await gw.ops.inject({ method: 'GET', url: '/livez' })).statusCode, 200);
  assert.equal((await gw.ops.inject({ method: 'HEAD', url: '/readyz' })).statusCode, 200);
  assert.equal((await gw.admin('GET', '/admin/v1/accounts')).statusCode, 200);
  assert.equal((await gw.admin('GET', '/admin/v1/accounts', { token: 'rgadm_not-a-token' })).statusCode, 401);
  assert.equal((await gw.admin('GET', '/admin/v1/accounts/acme')).statusCode, 200);
  assert.equal((await gw.admin('GET', '/admin/v1/nothing-here')).statusCode, 404);
  assert.equal((await gw.ops.inject({ method: 'GET', url: '/unknown?token=secret' })).statusCode, 404);
  assert.match(await rawExchange(port, `GET /livez HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`), /^HTTP\/1\.1 431 /);
  await gw.ops.inject({ method: 'GET', url: '/metrics' });

  const text = (await gw.ops.inject({ method: 'GET', url: '/metrics' })).body;
  assert.deepEqual(opsLines(text).sort(), [
    'gateway_ops_requests_total{route="/admin/v1/accounts",method="GET",status="200"} 1',
    'gateway_ops_requests_total{route="/admin/v1/accounts",method="GET",status="401"} 1',
    'gateway_ops_requests_total{route="/admin/v1/accounts/:id",method="GET",status="200"} 1',
    'gateway_ops_requests_total{route="/livez",method="GET",status="200"} 1',
    'gateway_ops_requests_total{route="/metrics",method="GET",status="200"} 1',
    'gateway_ops_requests_total{route="/readyz",method="HEAD",status="200"} 1',
    'gateway_ops_requests_total{route="unmatched",method="GET",status="404"} 2',
    'gateway_ops_requests_total{route="unmatched",method="GET",status="431"} 1',
  ]);
  assert.doesNotMatch(text, /gateway_http_requests_total\{[^}]*(livez|readyz|metrics|admin)/, 'the public family still counts the public API only');
});

t.test('the router refusing an ops path is counted as unmatched', async (t) => {
  const gw = await buildAdminGateway();
  t.teardown(() => gw.close());
  assert.equal((await gw.admin('GET', '/admin/v1/accounts/%zz')).statusCode, 400);
  const text = (await gw.ops.inject({ method: 'GET', url: '/metrics' })).body;
  assert.deepEqual(opsLines(text), ['gateway_ops_requests_total{route="unmatched",method="GET",status="400"} 1']);
});

t.test('without the admin API the probes are counted too', async (t) => {
  const gw = await buildTestGateway();
  const ops = buildOpsApp(gw.app);
  t.teardown(async () => {
    await ops.close();
    await gw.close();
  });
  assert.equal((await ops.inject({ method: 'GET', url: '/livez' })).statusCode, 200);
  const text = (await ops.inject({ method: 'GET', url: '/metrics' })).body;
  assert.deepEqual(opsLines(text), ['gateway_ops_requests_total{route="/livez",method="GET",status="200"} 1']);
});
