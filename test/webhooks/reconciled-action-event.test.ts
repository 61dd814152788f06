/**
 * A state action whose first attempt timed out after it took effect upstream (no event then: its
 * outcome was unknown) and whose retry with the same Idempotency-Key is reconciled as succeeded
 * (200 with the result): that action succeeded through the gateway, and `service.action.succeeded`
 * has no other source (the detector never reports it). The retry must emit it, as an order's
 * reconciled retry emits `order.created`.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { bearer, buildTestGateway } from '../helpers/gateway.js';

t.test('a reconciled suspend emits service.action.succeeded once', async (t) => {
  let now = Date.UTC(2026, 10, 22, 9, 0, 0);
  const gw = await buildTestGateway({
    profile: 'B',
    stores: createMemoryStores({ now: () => now }),
    whmcs: { timeoutMs: 5_000, actionTimeoutsMs: { ModuleSuspend: 400 } },
    config: { idempotency: { leaseMarginMs: 100 } },
  });
  t.teardown(() => gw.close());
  const key = gw.keys['acme:all'] as string;
  const headers = { ...bearer(key), 'content-type': 'application/json' };
  assert.equal((await gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers, payload: { url: 'https://hooks.example.com/in' } })).statusCode, 200);
  const post = () =>
    gw.app.inject({ method: 'POST', url: '/v1/services/1/actions', headers: { ...headers, 'idempotency-key': 'suspend-1' }, payload: { action: 'suspend' } });
  const types = async () => {
    const { entries } = await gw.stores.webhooks.listDeliveries('acme', 0, 100);
    return entries.map((entry) => (JSON.parse(entry.body) as { type: string }).type).filter((type) => type.startsWith('service.action.'));
  };

  gw.simulator.inject({ action: 'ModuleSuspend', kind: 'stall_after_effect', ms: 1_000, times: 1 });
  assert.ok((await post()).statusCode >= 500, 'the first attempt times out after the suspension took effect');
  assert.deepEqual(await types(), [], 'its outcome is unknown: no event yet');
  now += 10 * 60_000;
  const retry = await post();
  assert.equal(retry.statusCode, 200, retry.body);
  assert.equal(retry.json().service.status, 'suspended');
  assert.deepEqual(await types(), ['service.action.succeeded'], 'the action succeeded through the gateway: its event is sent');
  const replay = await post();
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.deepEqual(await types(), ['service.action.succeeded'], 'a replay sends it no second time');
});
