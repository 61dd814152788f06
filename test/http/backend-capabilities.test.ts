/**
 * The routes honour what a backend declares it can do: service actions it does not support are
 * refused like actions outside the profile (422, nothing recorded or sent), and an order whose
 * earlier attempt's outcome is unknown is never re-sent by a backend that cannot look it up by key.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createFossbillingBackend } from '../../mappings/fossbilling/backend.js';
import { FossbillingConfigSchema } from '../../mappings/fossbilling/config.js';
import { type Backend, BackendError } from '../../src/backend/backend.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { startFossbillingSimulator, type FossbillingSimulator } from '../../simulators/fossbilling/server.js';
import { buildTestGateway, postAsAcme, type TestGateway } from '../helpers/gateway.js';


t.test('service actions a backend does not support', async (t) => {
  let gw: TestGateway | undefined;
  let fossbilling: FossbillingSimulator | undefined;
  t.afterEach(async () => {
    await gw?.close();
    await fossbilling?.close();
    gw = undefined;
    fossbilling = undefined;
  });

  /** A gateway over FOSSBilling; test account acme is FOSSBilling client 1, whose order 1 is active. */
  async function overFossbilling(profile: 'A' | 'B'): Promise<{ gw: TestGateway; fossbilling: FossbillingSimulator }> {
    fossbilling = await startFossbillingSimulator();
    const config = FossbillingConfigSchema.parse({ url: fossbilling.url, apiToken: fossbilling.apiToken });
    gw = await buildTestGateway({ profile, backend: createFossbillingBackend(config) });
    return { gw, fossbilling };
  }

  const writes = (simulator: FossbillingSimulator) => simulator.calls.filter((call) => /^order\/(suspend|unsuspend|cancel|uncancel)$/.test(call.method));

  t.test('Profile A over FOSSBilling: reboot is 422 invalid_action allowing cancel only, and the key stays free', async () => {
    const { gw, fossbilling } = await overFossbilling('A');
    const refused = await postAsAcme(gw, '/v1/services/1/actions', 'fb-a-1', { action: 'reboot' });
    assert.equal(refused.statusCode, 422, refused.body);
    assert.equal(refused.json().reason, 'invalid_action');
    assert.deepEqual(refused.json().allowed_actions, ['cancel']);
    assert.equal(fossbilling.calls.length, 0, 'nothing reaches FOSSBilling');

    const again = await postAsAcme(gw, '/v1/services/1/actions', 'fb-a-1', { action: 'reboot' });
    assert.equal(again.statusCode, 422);
    assert.equal(again.headers['idempotent-replayed'], undefined, 'a 422 is not stored for replay');

    const cancelled = await postAsAcme(gw, '/v1/services/1/actions', 'fb-a-1', { action: 'cancel' });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    assert.equal(cancelled.json().service.status, 'cancelled');
    assert.deepEqual(writes(fossbilling).map((call) => call.method), ['order/cancel']);
  });

  t.test('Profile B over FOSSBilling: reboot and terminate are refused, allowing suspend and unsuspend', async () => {
    const { gw, fossbilling } = await overFossbilling('B');
    for (const action of ['reboot', 'terminate']) {
      const refused = await postAsAcme(gw, '/v1/services/1/actions', `fb-b-${action}`, { action });
      assert.equal(refused.statusCode, 422, refused.body);
      assert.deepEqual(refused.json().allowed_actions, ['suspend', 'unsuspend']);
    }
    assert.equal(fossbilling.calls.length, 0);
  });
});

t.test('orders over a backend that cannot reconcile', async (t) => {
  t.test('answers a retry after an unknown outcome with 503 outcome_unknown, searching and sending nothing', async () => {
    let now = Date.UTC(2026, 10, 22, 9, 0, 0);
    const sent: string[] = [];
    let searches = 0;
    const unused = async (): Promise<never> => {
      throw new Error('not used by this test');
    };
    const backend: Backend = {
      name: 'no-lookup',
      capabilities: { serviceActions: [], reconcilesOrders: false },
      writeTimeoutMs: 1_000,
      getAccount: unused,
      listProducts: unused,
      getProduct: unused,
      // The write goes out and its answer is lost.
      placeOrder: async (_customer, _input, ctx) => {
        await ctx.beforeWrite();
        sent.push(ctx.idempotencyKey);
        throw new BackendError('timeout', 'The billing system did not answer in time.', { outcomeUnknown: true });
      },
      findOrderByIdempotencyKey: async () => {
        searches += 1;
        return { kind: 'absent' };
      },
      getOrder: unused,
      listServices: unused,
      getService: unused,
      getCredentials: unused,
      runServiceAction: unused,
      getBalance: unused,
      listInvoices: unused,
      getInvoiceDocument: unused,
      ping: async () => true,
      close: async () => undefined,
    };
    const gw = await buildTestGateway({ backend, stores: createMemoryStores({ now: () => now }) });
    try {
      const order = { product_id: '1', billing_cycle: 'monthly' };
      assert.equal((await postAsAcme(gw, '/v1/orders', 'nl-1', order)).statusCode, 504);
      now += 10 * 60_000; // past the settle time
      const retry = await postAsAcme(gw, '/v1/orders', 'nl-1', order);
      assert.equal(retry.statusCode, 503, retry.body);
      assert.equal(retry.json().reason, 'outcome_unknown');
      assert.ok(Number(retry.headers['retry-after']) >= 1);
      assert.equal(searches, 0, 'no search was made');
      assert.deepEqual(sent, ['nl-1'], 'the order was sent once');
      assert.ok(gw.logs.some((line) => line.includes('cannot find an order by its Idempotency-Key')), 'the operator is told why');
    } finally {
      await gw.close();
    }
  });
});
