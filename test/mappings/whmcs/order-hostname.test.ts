/**
 * The hostname of an order must become the service's domain as the client wrote it.
 *
 * WHMCS 8.7.2 orderfunctions.php calcCartTotals (AddOrder's checkout): `$domain` is `domain[n]`;
 * when `hostname[n]` is set, `if (1 < substr_count($serverhostname, ".") || !$domain) $domain =
 * $serverhostname; else $domain = $serverhostname . "." . $domain;`, and that is what tblhosting
 * stores. Sending the same name as both therefore stores "example.net.example.net" for a host name
 * with fewer than two dots. (The simulator took `hostname || domain` and did not show it.)
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { CUSTOMER, FakeWhmcs } from './fake-whmcs.js';
import * as answers from './fixtures/answers.js';
import { startWhmcsSimulator } from '../../../simulators/whmcs/server.js';
import { whmcsSimulatorConfig } from '../../../simulators/whmcs/sandbox.js';
import { createWhmcsBackend } from '../../../mappings/whmcs/backend.js';
import { WhmcsConfigSchema } from '../../../mappings/whmcs/config.js';

const CTX = { requestId: 'req-review', idempotencyKey: 'key-1', idempotencyRecord: 'rec-1', beforeWrite: async () => undefined };

/** tblhosting.domain as WHMCS's calcCartTotals derives it from `domain[0]` and `hostname[0]`. */
function storedDomain(params: URLSearchParams): string {
  const domain = params.get('domain[0]') ?? '';
  const hostname = (params.get('hostname[0]') ?? '').replace(/^[ .]+|[ .]+$/g, '');
  if (hostname === '') return domain;
  return hostname.split('.').length - 1 > 1 || domain === '' ? hostname : `${hostname}.${domain}`;
}

t.test('WHMCS stores the ordered hostname unchanged (fake WHMCS)', async (t) => {
  for (const hostname of ['example.net', 'vps7', 'vps7.example.net']) {
    t.test(hostname, async () => {
      const whmcs = new FakeWhmcs()
        .answer('GetProducts', answers.catalog)
        .answer('GetClientsDetails', answers.clientDetails)
        .answer('AddOrder', answers.addOrder)
        .answer('GetOrders', answers.orders);
      try {
        await whmcs.backend().placeOrder(CUSTOMER, { product_id: '2', billing_cycle: 'annually', hostname }, CTX);
        const sent = whmcs.requests('AddOrder')[0];
        assert.ok(sent);
        assert.equal(storedDomain(sent), hostname);
      } finally {
        await whmcs.close();
      }
    });
  }
});

t.test('the simulator stores what WHMCS would', async () => {
  const sim = await startWhmcsSimulator();
  try {
    const backend = createWhmcsBackend(WhmcsConfigSchema.parse(whmcsSimulatorConfig(sim)));
    try {
      const order = await backend.placeOrder({ accountId: 'acme', upstreamId: '1' }, { product_id: '1', billing_cycle: 'monthly', hostname: 'example.net' }, CTX);
      const service = await backend.getService({ accountId: 'acme', upstreamId: '1' }, order.service_ids[0] as string, CTX);
      assert.equal(service.hostname, 'example.net');
    } finally {
      await backend.close();
    }
  } finally {
    await sim.close();
  }
});
