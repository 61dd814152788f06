/**
 * The upstream waiting bound at its edges: the v1 passthrough gives each forward's place back (more
 * forwards one after the other than the bound holds are all served), and with exactly as many calls
 * in flight as connections a health ping is not queued behind them.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { boundedPing } from '../../src/ops/bounded-ping.js';
import { WhmcsConfigSchema } from '../../mappings/whmcs/config.js';
import { createWhmcsBackend } from '../../mappings/whmcs/backend.js';
import { startWhmcsSimulator } from '../../simulators/whmcs/server.js';
import { whmcsSimulatorConfig } from '../../simulators/whmcs/sandbox.js';
import { createSeedState } from '../../simulators/whmcs/fixtures.js';

t.test('v1 passthrough, 1 connection: ten forwards one after the other are all served', async (t) => {
  const { buildPassthroughGateway, json, SERVICE } = await import('../mappings/v1/harness.js');
  const { bearer } = await import('../helpers/gateway.js');
  const gw = await buildPassthroughGateway({ v1: { connections: 1, timeoutMs: 10_000 } });
  gw.upstream.answer((request, response, socket) => json(200, SERVICE)(request, response, socket));
  t.teardown(() => gw.close());
  for (let n = 1; n <= 10; n += 1) {
    const response = await gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:all']) });
    assert.equal(response.statusCode, 200, `forward ${n}: ${response.body}`);
  }
});

t.test('WHMCS, 1 connection busy with one slow call: the health ping answers at once, not behind it', async (t) => {
  const simulator = await startWhmcsSimulator({ host: '127.0.0.1', seed: createSeedState });
  simulator.inject({ kind: 'latency', ms: 60_000, action: 'GetInvoices' });
  const backend = createWhmcsBackend(WhmcsConfigSchema.parse({ ...whmcsSimulatorConfig(simulator), connections: 1, timeoutMs: 3_000 }));
  t.teardown(async () => {
    await simulator.close();
    await backend.close();
  });
  const slow = backend.listInvoices({ accountId: 'acme', upstreamId: '1' }, { page: 1, perPage: 10 }, { requestId: 'one' }).catch(() => undefined);
  while (simulator.calls.filter((call) => call.action === 'getinvoices').length < 1) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(await boundedPing(() => backend.ping()), true, 'ready while its one connection serves a call');
  void slow;
});
