import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { BackendError } from '../../../src/backend/backend.js';
import { FossbillingConfigSchema } from '../../../mappings/fossbilling/config.js';
import { type CallPolicy, createFossbillingTransport, FossbillingError } from '../../../mappings/fossbilling/transport.js';
import { type FossbillingSimulator, startFossbillingSimulator } from '../../../simulators/fossbilling/server.js';

const READ: CallPolicy = { retry: true, coalesce: true, timeoutMs: 2_000 };
const WRITE: CallPolicy = { retry: false, coalesce: false, write: true, timeoutMs: 300 };

async function failure(work: Promise<unknown>): Promise<BackendError> {
  const error = await work.then(
    () => assert.fail('expected a failure'),
    (reason: unknown) => reason,
  );
  assert.ok(error instanceof BackendError);
  return error;
}

describe('FOSSBilling transport against the simulator', () => {
  let sim: FossbillingSimulator;
  let transport: ReturnType<typeof createFossbillingTransport>;
  before(async () => {
    sim = await startFossbillingSimulator();
    transport = createFossbillingTransport(FossbillingConfigSchema.parse({ url: sim.url, apiToken: sim.apiToken }));
  });
  after(async () => {
    await transport.close();
    await sim.close();
  });
  beforeEach(() => {
    sim.clearFaults();
    sim.calls.length = 0;
  });

  it('POSTs JSON to /api/admin/<module>/<method> with Basic admin:<token> and answers the result', async () => {
    const result = (await transport.call('client/get', { id: 1 }, READ)) as { email: string };
    assert.equal(result.email, 'ada@example.com');
    assert.deepEqual(sim.calls, [{ method: 'client/get', params: { id: 1 } }]);
  });

  it('turns an error envelope inside HTTP 200 into a FossbillingError with its code', async () => {
    const error = await failure(transport.call('order/get', { id: 999 }, READ));
    assert.ok(error instanceof FossbillingError);
    assert.equal(error.code, 9999);
    assert.equal(error.upstreamMessage, 'Order Not Found');
    assert.equal(error.detail, 'The billing system reported an error.');
  });

  it('passes 740 (no such API method, HTTP 404) on as a coded error', async () => {
    const error = await failure(transport.call('order/reboot', { id: 1 }, READ));
    assert.ok(error instanceof FossbillingError);
    assert.equal(error.code, 740);
  });

  it('reports a refused token as an upstream error for the operator, never with the token', async () => {
    const wrong = createFossbillingTransport(FossbillingConfigSchema.parse({ url: sim.url, apiToken: 'wrong-token-value' }));
    try {
      const error = await failure(wrong.call('client/get', { id: 1 }, READ));
      assert.equal(error.kind, 'upstream_error');
      assert.equal(error.detail, 'The billing system refused the gateway.');
      assert.match(error.operatorMessage ?? '', /error 204.*apiToken/);
      assert.equal((error.operatorMessage ?? '').includes('wrong-token-value'), false);
    } finally {
      await wrong.close();
    }
  });

  it('reports a missing staff permission (403) as an upstream error for the operator', async () => {
    const denied = await startFossbillingSimulator({ deniedMethods: ['invoice/get_list'] });
    const limited = createFossbillingTransport(FossbillingConfigSchema.parse({ url: denied.url, apiToken: denied.apiToken }));
    try {
      const error = await failure(limited.call('invoice/get_list', { client_id: 1 }, READ));
      assert.equal(error.kind, 'upstream_error');
      assert.equal(error.detail, 'The billing system refused the gateway.');
      assert.match(error.operatorMessage ?? '', /error 403.*permission/);
    } finally {
      await limited.close();
      await denied.close();
    }
  });

  it('maps FOSSBilling\'s rate limit (429) to unavailable with its Retry-After', async () => {
    sim.inject({ kind: 'rate_limited', retryAfterSeconds: 17, times: 1 });
    const error = await failure(transport.call('client/get', { id: 1 }, READ));
    assert.equal(error.kind, 'unavailable');
    assert.equal(error.retryAfterMs, 17_000);
  });

  it('refuses HTML and cut-off bodies as unreadable; a cut-off write leaves its outcome unknown', async () => {
    sim.inject({ kind: 'html', times: 1 });
    const html = await failure(transport.call('client/get', { id: 1 }, READ));
    assert.equal(html.kind, 'upstream_error');
    assert.equal(html.outcomeUnknown, false);
    sim.inject({ kind: 'malformed', method: 'order/suspend', times: 1 });
    const cut = await failure(transport.call('order/suspend', { id: 1 }, WRITE));
    assert.equal(cut.outcomeUnknown, true);
    assert.equal(sim.state.orders.find((order) => order.id === 1)?.status, 'suspended');
    sim.state.orders.find((order) => order.id === 1)!.status = 'active';
  });

  it('treats an HTTP 500 on a write as an unknown outcome', async () => {
    sim.inject({ kind: 'http500', times: 1 });
    const error = await failure(transport.call('order/cancel', { id: 1 }, WRITE));
    assert.equal(error.kind, 'upstream_error');
    assert.equal(error.outcomeUnknown, true);
  });

  it('times out a hanging call; a write that was sent has an unknown outcome', async () => {
    sim.inject({ kind: 'hang', times: 1 });
    const error = await failure(transport.call('order/suspend', { id: 1 }, WRITE));
    assert.equal(error.kind, 'timeout');
    assert.equal(error.outcomeUnknown, true);
  });

  it('reports a reset connection after sending as broken, with unknown outcome for writes', async () => {
    sim.inject({ kind: 'reset', times: 1 });
    const error = await failure(transport.call('order/suspend', { id: 1 }, WRITE));
    assert.equal(error.kind, 'upstream_error');
    assert.equal(error.outcomeUnknown, true);
  });

  it('finds nothing listening as unavailable (nothing sent)', async () => {
    const closed = await startFossbillingSimulator();
    const url = closed.url;
    await closed.close();
    const dead = createFossbillingTransport(FossbillingConfigSchema.parse({ url, apiToken: 'x-token' }));
    try {
      const error = await failure(dead.call('order/create', {}, WRITE));
      assert.equal(error.kind, 'unavailable');
      assert.equal(error.outcomeUnknown, false);
    } finally {
      await dead.close();
    }
  });

  it('coalesces identical concurrent reads and caches when asked', async () => {
    const cached: CallPolicy = { ...READ, cacheMs: 60_000 };
    await Promise.all([transport.call('product/get_list', { page: 1 }, cached), transport.call('product/get_list', { page: 1 }, cached)]);
    await transport.call('product/get_list', { page: 1 }, cached);
    assert.equal(sim.calls.length, 1);
  });
});
