/**
 * Orders and actions are sent at most once, whatever the upstream shows (issue 7). Each case is a
 * review finding, seen as a client sees it. The store runs on an injected clock, so the settle
 * time and the lease pass when the test says so; the upstream runs in real time.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, parseConfig } from '../../src/config.js';
import { BACKENDS } from '../../mappings/index.js';
import { Idempotency } from '../../src/http/idempotency.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { bearer, buildTestGateway, type TestGateway } from '../helpers/gateway.js';
import { createFossbillingBackend } from '../../mappings/fossbilling/backend.js';
import { FossbillingConfigSchema } from '../../mappings/fossbilling/config.js';
import { createFossbillingSeed, startFossbillingSimulator } from '../../simulators/fossbilling/server.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const ORDER = { product_id: '2', billing_cycle: 'monthly' };

function clock() {
  let now = Date.UTC(2026, 10, 22, 9, 0, 0);
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

async function until(what: string, condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 20) {
    if (waited > 5_000) assert.fail(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

t.test('reconciliation: at most once, whatever the upstream shows', async (t) => {
  let gw: TestGateway;
  let time: ReturnType<typeof clock>;

  const start = async (profile: 'A' | 'B' = 'A') => {
    time = clock();
    gw = await buildTestGateway({
      profile,
      stores: createMemoryStores({ now: time.now }),
      whmcs: { timeoutMs: 5_000, actionTimeoutsMs: { AddOrder: 400, ModuleCustom: 400, ModuleSuspend: 400, AddCancelRequest: 400 } },
      config: { idempotency: { leaseMarginMs: 100 } },
    });
  };
  t.beforeEach(() => start());
  t.afterEach(() => gw.close());

  const post = (url: string, key: string, body: unknown) =>
    gw.app.inject({
      method: 'POST',
      url,
      headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json', 'idempotency-key': key },
      payload: JSON.stringify(body),
    });
  const order = (key: string, body: unknown = ORDER) => post('/v1/orders', key, body);
  const sent = (action: string) => gw.simulator.calls.filter((call) => call.action === action).length;
  const orders = () => gw.simulator.state.orders;
  /** Past any settle time and lease of these tests, within Profile A's hour. */
  const settle = () => time.advance(10 * MINUTE);

  t.test('two orders for one key after a timeout: the retry waits for the settle time, then finds the order', async () => {
    const before = orders().length;
    gw.simulator.inject({ action: 'AddOrder', kind: 'latency', ms: 1_000, times: 1 });
    assert.equal((await order('slow-1')).statusCode, 504);
    const early = await order('slow-1');
    assert.equal(early.statusCode, 409, early.body);
    assert.equal(early.json().reason, 'idempotency_in_progress');
    assert.ok(Number(early.headers['retry-after']) >= 1);
    assert.equal(sent('addorder'), 1, 'nothing sent while the first AddOrder may still run');

    await until('WHMCS to finish the first AddOrder', () => orders().length === before + 1);
    settle();
    const retry = await order('slow-1');
    assert.equal(retry.statusCode, 201, retry.body);
    assert.equal(retry.json().id, String(orders().at(-1)?.id));
    assert.equal(orders().length, before + 1);
    assert.equal(sent('addorder'), 1);
  });

  t.test('services answered without custom fields: 503 outcome_unknown, an operator log line, nothing sent again', async () => {
    gw.simulator.inject({ action: 'AddOrder', kind: 'stall_after_effect', ms: 1_000, times: 1 });
    assert.equal((await order('hidden-1')).statusCode, 504);
    gw.simulator.quirks.hideServiceCustomFields = true;
    settle();
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const retry = await order('hidden-1');
      assert.equal(retry.statusCode, 503, retry.body);
      assert.equal(retry.json().reason, 'outcome_unknown');
      assert.ok(Number(retry.headers['retry-after']) >= 1);
      settle();
    }
    assert.equal(sent('addorder'), 1);
    const line = gw.logs.find((entry) => entry.includes('"level":50') && entry.includes('does not show the custom field'));
    assert.ok(line, 'the reason is logged at error level');
    assert.ok(!line.includes(gw.keys['acme:all'] as string), 'and carries no secret');

    gw.simulator.quirks.hideServiceCustomFields = false;
    const found = await order('hidden-1');
    assert.equal(found.statusCode, 201, 'found once the answers show the field');
    assert.equal(sent('addorder'), 1);
  });

  t.test('a reused key is never matched to an older order (Profile B, after the record expired)', async () => {
    await gw.close();
    await start('B');
    const first = await order('reused-1');
    assert.equal(first.statusCode, 201);
    time.advance(25 * HOUR);
    gw.simulator.inject({ action: 'AddOrder', kind: 'stall_after_effect', ms: 1_000, times: 1 });
    assert.equal((await order('reused-1')).statusCode, 504);
    const second = String(orders().at(-1)?.id);
    assert.notEqual(second, first.json().id);
    settle();
    const retry = await order('reused-1');
    assert.equal(retry.statusCode, 201, retry.body);
    assert.equal(retry.json().id, second, 'the order of this use of the key, not the first use');
    assert.equal(sent('addorder'), 2);
  });

  t.test('a "not found" after a sent write is not stored as final', async () => {
    gw.simulator.inject({ action: 'GetOrders', kind: 'latency', ms: 300, times: 1 });
    const before = orders().length;
    const pending = order('lost-1');
    await until('the order to be placed', () => orders().length === before + 1);
    const placed = orders().at(-1);
    assert.ok(placed);
    const owner = placed.clientId;
    placed.clientId = 999; // The read-back no longer sees it: a definitive-looking not found.
    const first = await pending;
    assert.equal(first.statusCode, 503, first.body);
    assert.equal(first.json().reason, 'outcome_unknown');

    settle();
    placed.clientId = owner;
    const retry = await order('lost-1');
    assert.equal(retry.statusCode, 201, retry.body);
    assert.equal(retry.headers['idempotent-replayed'], undefined, 'not a replay of a stored 404');
    assert.equal(retry.json().id, String(placed.id));
    assert.equal(sent('addorder'), 1);
  });

  t.test('the sent write\'s own refusal is stored and replayed: the order is not sent again once it could succeed', async () => {
    gw.simulator.inject({ action: 'AddOrder', kind: 'latency', ms: 300, times: 1 });
    const client = gw.simulator.state.clients.find((candidate) => candidate.id === 1);
    assert.ok(client);
    const pending = order('closed-1');
    // Checked as active before the write; closed by the time WHMCS takes the AddOrder.
    await until('the AddOrder to be sent', () => sent('addorder') === 1);
    client.status = 'Closed';
    const refused = await pending;
    assert.equal(refused.statusCode, 422, refused.body);

    client.status = 'Active';
    settle();
    const retry = await order('closed-1');
    assert.equal(retry.statusCode, 422, retry.body);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.deepEqual(retry.json().detail, refused.json().detail);
    assert.equal(sent('addorder'), 1, 'AddOrder was sent once');
  });

  t.test('a lease shorter than the retry path: a holder that lost its lease sends nothing', async () => {
    gw.simulator.inject({ action: 'AddOrder', kind: 'reset', times: 1 });
    const first = await order('lease-1');
    assert.ok(first.statusCode >= 500, first.body);
    const before = orders().length;
    settle();

    gw.simulator.inject({ action: 'GetClientsProducts', kind: 'latency', ms: 500, times: 1 });
    const searches = sent('getclientsproducts');
    const slow = order('lease-1');
    await until('the slow search to start', () => sent('getclientsproducts') > searches);
    settle(); // the slow holder's lease runs out while it searches
    const takeover = await order('lease-1');
    assert.equal(takeover.statusCode, 201, `${takeover.body} ${gw.logs.filter((l) => l.includes('cannot be proven')).join('\n')}`);
    const late = await slow;
    assert.equal(late.statusCode, 409, late.body);
    assert.equal(late.json().reason, 'idempotency_in_progress');
    assert.equal(orders().length, before + 1, 'one order, by the holder of the key');
  });

  t.test('Profile A after one hour: 410 for a record of unknown outcome, whatever the body; never a new AddOrder', async () => {
    gw.simulator.inject({ action: 'AddOrder', kind: 'stall_after_effect', ms: 1_000, times: 1 });
    assert.equal((await order('hour-1')).statusCode, 504);
    time.advance(HOUR + 1);
    const stale = await order('hour-1');
    assert.equal(stale.statusCode, 410, stale.body);
    assert.equal(stale.json().reason, 'replay_stale');
    const otherBody = await order('hour-1', { ...ORDER, billing_cycle: 'annually' });
    assert.equal(otherBody.statusCode, 410, 'another body on an old key is stale too, not a conflict');
    assert.equal(sent('addorder'), 1);
  });

  t.test('a power action whose outcome is unknown answers 503 outcome_unknown and is not run again', async () => {
    gw.simulator.inject({ action: 'ModuleCustom', kind: 'stall_after_effect', ms: 1_000, times: 1 });
    assert.equal((await post('/v1/services/1/actions', 'reboot-1', { action: 'reboot' })).statusCode, 504);
    settle();
    const retry = await post('/v1/services/1/actions', 'reboot-1', { action: 'reboot' });
    assert.equal(retry.statusCode, 503, retry.body);
    assert.equal(retry.json().reason, 'outcome_unknown');
    assert.equal(sent('modulecustom'), 1);
  });

  t.test('a cancellation whose outcome is unknown is not judged from the cached cancellation list', async () => {
    gw.simulator.inject({ action: 'AddCancelRequest', kind: 'stall_after_effect', ms: 1_000, times: 1 });
    assert.ok((await post('/v1/services/1/actions', 'cancel-1', { action: 'cancel' })).statusCode >= 500);
    settle();
    const retry = await post('/v1/services/1/actions', 'cancel-1', { action: 'cancel' });
    assert.equal(retry.statusCode, 503, retry.body);
    assert.equal(retry.json().reason, 'outcome_unknown');
    assert.equal(sent('addcancelrequest'), 1);
  });

  t.test('a state action whose outcome is unknown is reconciled from a fresh read of the service', async () => {
    await gw.close();
    await start('B');
    gw.simulator.inject({ action: 'ModuleSuspend', kind: 'stall_after_effect', ms: 1_000, times: 1 });
    assert.ok((await post('/v1/services/1/actions', 'suspend-1', { action: 'suspend' })).statusCode >= 500);
    settle();
    gw.simulator.inject({ action: 'GetClientsProducts', kind: 'html', times: 3 });
    const unreadable = await post('/v1/services/1/actions', 'suspend-1', { action: 'suspend' });
    assert.equal(unreadable.statusCode, 503, 'a state that cannot be read proves nothing');
    assert.equal(unreadable.json().reason, 'outcome_unknown');
    gw.simulator.clearFaults();
    settle();
    const retry = await post('/v1/services/1/actions', 'suspend-1', { action: 'suspend' });
    assert.equal(retry.statusCode, 200, retry.body);
    assert.equal(retry.json().service.status, 'suspended');
    assert.equal(sent('modulesuspend'), 1);
  });
});

t.test('FOSSBilling: order/create failing after it stored the order (its invoice step) leaves the outcome unknown; the retry finds the order', async (t) => {
  const sim = await startFossbillingSimulator({ seed: createFossbillingSeed });
  const time = clock();
  const gw = await buildTestGateway({
    backend: createFossbillingBackend(FossbillingConfigSchema.parse({ url: sim.url, apiToken: sim.apiToken })),
    stores: createMemoryStores({ now: time.now }),
  });
  t.teardown(async () => {
    await gw.close();
    await sim.close();
  });
  const order = () =>
    gw.app.inject({
      method: 'POST',
      url: '/v1/orders',
      headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json', 'idempotency-key': 'invoice-failed' },
      payload: JSON.stringify({ product_id: '2', billing_cycle: 'onetime' }),
    });
  sim.inject({ kind: 'error_after_effect', method: 'order/create', times: 1 });
  const before = sim.state.orders.length;
  const failed = await order();
  assert.equal(failed.statusCode, 502, failed.body);
  assert.equal(sim.state.orders.length, before + 1, 'the order stands');

  time.advance(10 * MINUTE);
  const retry = await order();
  assert.equal(retry.statusCode, 201, retry.body);
  assert.equal(retry.json().id, String(sim.state.orders.at(-1)?.id), 'found by its key, not placed again');
  assert.equal(sim.calls.filter((call) => call.method === 'order/create').length, 1);
});

t.test('settle time configuration', async (t) => {
  const idempotency = (settings: Record<string, unknown>) =>
    new Idempotency(createMemoryStores().idempotency, parseConfig({ idempotency: settings }, BACKENDS), 30_000);

  t.test('defaults to the write timeout plus the lease margin', async () => {
    assert.equal(idempotency({}).settleMs, 35_000);
    assert.equal(idempotency({ leaseMarginMs: 1_000 }).settleMs, 31_000);
  });

  t.test('refuses a settle time shorter than the write timeout at boot', async () => {
    assert.throws(() => idempotency({ settleMs: 29_999 }), ConfigError);
    assert.equal(idempotency({ settleMs: 120_000 }).settleMs, 120_000);
  });
});
