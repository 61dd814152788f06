/**
 * README ("Probes"): an upstream that does not answer is reported on /readyz, and the gateway stays
 * ready, so that a load balancer keeps sending it traffic and integrators get its Problem+JSON 503
 * (with Retry-After) rather than the balancer's own error page from every instance at once.
 * `ops.readyRequiresUpstream` makes it unready, for a balancer that fails over elsewhere.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildOpsApp } from '../../src/ops/server.js';
import { bearer, buildTestGateway } from '../helpers/gateway.js';

async function withUpstreamDown(config: Record<string, unknown>, check: (ready: { statusCode: number; json(): any }, api: { statusCode: number; headers: Record<string, unknown>; json(): any }) => void) {
  const gw = await buildTestGateway({ config });
  const ops = buildOpsApp(gw.app);
  try {
    assert.equal((await ops.inject({ method: 'GET', url: '/readyz' })).statusCode, 200, 'ready while the upstream answers');
    await gw.simulator.close();
    // Past the readiness check's one-second memo.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const ready = await ops.inject({ method: 'GET', url: '/readyz' });
    const api = await gw.app.inject({ method: 'GET', url: '/v1/services', headers: bearer(gw.keys['acme:all'] as string) });
    check(ready, api);
  } finally {
    await ops.close();
    await gw.close();
  }
}

t.test('by default: ready, the upstream reported down, and the API answers its own 503', async () => {
  await withUpstreamDown({}, (ready, api) => {
    assert.equal(ready.statusCode, 200);
    assert.deepEqual(ready.json(), { status: 'ready', checks: { store: 'ok', upstream: 'down', shutting_down: false } });
    assert.equal(api.statusCode, 503);
    assert.equal(api.json().reason, 'upstream_unavailable');
    assert.ok(api.headers['retry-after'], 'with Retry-After');
  });
});

t.test('ops.readyRequiresUpstream: unready while the upstream does not answer', async () => {
  await withUpstreamDown({ ops: { readyRequiresUpstream: true } }, (ready) => {
    assert.equal(ready.statusCode, 503);
    assert.deepEqual(ready.json(), { status: 'unready', checks: { store: 'ok', upstream: 'down', shutting_down: false } });
  });
});
