/**
 * Idempotency as clients see it (contract §5), both profiles, with an injected clock.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { StoreUnavailableError } from '../../src/stores/types.js';
import { bearer, buildTestGateway, type TestGateway } from '../helpers/gateway.js';

function clock() {
  let now = Date.UTC(2026, 10, 22, 9, 0, 0);
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const HOUR = 3_600_000;
const ORDER = { product_id: '1', billing_cycle: 'monthly' };

function order(gw: TestGateway, key: string, body: unknown = ORDER, account = 'acme') {
  return gw.app.inject({
    method: 'POST',
    url: '/v1/orders',
    headers: { ...bearer(gw.keys[`${account}:all`]), 'content-type': 'application/json', 'idempotency-key': key },
    payload: JSON.stringify(body),
  });
}

function action(gw: TestGateway, key: string, name: string, service = '1') {
  return gw.app.inject({
    method: 'POST',
    url: `/v1/services/${service}/actions`,
    headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json', 'idempotency-key': key },
    payload: JSON.stringify({ action: name }),
  });
}

t.test('idempotency, profile A', async (t) => {
  t.test('replays within the hour, 410 replay_stale after it, for any use of the key', async () => {
    const time = clock();
    const gw = await buildTestGateway({ stores: createMemoryStores({ now: time.now }) });
    try {
      const first = await order(gw, 'a-1');
      assert.equal(first.statusCode, 201);
      time.advance(HOUR - 1000);
      const replay = await order(gw, 'a-1', { billing_cycle: 'monthly', product_id: '1' });
      assert.equal(replay.statusCode, 201, 'key order does not matter');
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body, first.body);
      time.advance(2000);
      const stale = await order(gw, 'a-1');
      assert.equal(stale.statusCode, 410);
      assert.equal(stale.json().reason, 'replay_stale');
      time.advance(5 * 24 * HOUR);
      assert.equal((await order(gw, 'a-1')).statusCode, 410, 'still remembered days later');
      const orders = gw.simulator.state.orders.length;
      time.advance(3 * 24 * HOUR);
      assert.equal((await order(gw, 'a-1')).statusCode, 201, 'forgotten after the retention');
      assert.equal(gw.simulator.state.orders.length, orders + 1);
    } finally {
      await gw.close();
    }
  });

  t.test('a second request while the first runs → 409 idempotency_in_progress with Retry-After; one order', async () => {
    const gw = await buildTestGateway();
    try {
      gw.simulator.inject({ action: 'AddOrder', kind: 'latency', ms: 300, times: 1 });
      const before = gw.simulator.state.orders.length;
      const [a, b] = await Promise.all([order(gw, 'race-1'), new Promise((r) => setTimeout(r, 50)).then(() => order(gw, 'race-1'))]);
      const statuses = [a.statusCode, b.statusCode].sort();
      assert.deepEqual(statuses, [201, 409]);
      const busy = a.statusCode === 409 ? a : b;
      assert.equal(busy.json().reason, 'idempotency_in_progress');
      assert.ok(Number(busy.headers['retry-after']) >= 1);
      assert.equal(gw.simulator.state.orders.length, before + 1);
    } finally {
      await gw.close();
    }
  });

  t.test('records are per account: the same key from another account is a new request', async () => {
    const gw = await buildTestGateway();
    try {
      const acme = await order(gw, 'shared-key');
      const beta = await order(gw, 'shared-key', ORDER, 'beta');
      assert.equal(acme.statusCode, 201);
      assert.equal(beta.statusCode, 201);
      assert.notEqual(acme.json().id, beta.json().id);
      assert.equal(beta.headers['idempotent-replayed'], undefined);
    } finally {
      await gw.close();
    }
  });

  t.test('a key quoted as the IETF draft sends it (a structured-field string) is the same key unquoted', async () => {
    const gw = await buildTestGateway();
    try {
      const orders = gw.simulator.state.orders.length;
      const quoted = await order(gw, '"8e03978e-40d5-43e8"');
      assert.equal(quoted.statusCode, 201, quoted.body);
      const plain = await order(gw, '8e03978e-40d5-43e8');
      assert.equal(plain.headers['idempotent-replayed'], 'true');
      assert.equal(plain.body, quoted.body);
      assert.equal((await order(gw, '"8e03978e-40d5-43e8"')).headers['idempotent-replayed'], 'true');
      assert.equal(gw.simulator.state.orders.length, orders + 1, 'one order');
    } finally {
      await gw.close();
    }
  });

  t.test('rejections before the backend acted are not stored: fix the request, keep the key', async () => {
    const gw = await buildTestGateway();
    try {
      assert.equal((await action(gw, 'fix-1', 'suspend')).statusCode, 422, 'invalid_action');
      const fixed = await action(gw, 'fix-1', 'reboot');
      assert.equal(fixed.statusCode, 200, fixed.body);
      assert.equal((await order(gw, 'fix-2', { product_id: '4', billing_cycle: 'monthly' })).statusCode, 422, 'validation_failed');
      assert.equal((await order(gw, 'fix-2', { product_id: '4', billing_cycle: 'annually' })).statusCode, 201);
    } finally {
      await gw.close();
    }
  });

  t.test('a write-ahead mark that fails where it stands (too few replicas) is taken back: the retry runs fresh, sent once', async () => {
    const stores = createMemoryStores();
    const { idempotency } = stores;
    const markSent = idempotency.markSent.bind(idempotency);
    let lagging = true;
    // As RedisIdempotencyStore does when WAIT falls short: the mark stands on the primary, the call fails.
    idempotency.markSent = async (scope, token, leaseMs) => {
      const marked = await markSent(scope, token, leaseMs);
      if (lagging) throw new StoreUnavailableError('idempotency record reached 0 of 1 replicas within 50 ms');
      return marked;
    };
    const gw = await buildTestGateway({ stores });
    const sent = () => gw.simulator.calls.filter((call) => call.action.toLowerCase() === 'modulecustom').length;
    try {
      const refused = await action(gw, 'wal-1', 'reboot');
      assert.equal(refused.statusCode, 503, refused.body);
      assert.equal(refused.json().reason, 'store_unavailable');
      assert.equal(sent(), 0);
      lagging = false;
      const retry = await action(gw, 'wal-1', 'reboot');
      assert.equal(retry.statusCode, 200, 'not 503 outcome_unknown: nothing was ever sent');
      assert.equal(retry.headers['idempotent-replayed'], undefined);
      assert.equal(sent(), 1);
    } finally {
      await gw.close();
    }
  });

  t.test('a definitive refusal from the backend is stored and replayed', async () => {
    const gw = await buildTestGateway();
    try {
      const refused = await action(gw, 'st-1', 'reboot', '2');
      assert.equal(refused.statusCode, 409);
      assert.equal(refused.json().reason, 'action_not_allowed');
      const again = await action(gw, 'st-1', 'reboot', '2');
      assert.equal(again.statusCode, 409);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.json().reason, 'action_not_allowed');
      const other = await action(gw, 'st-1', 'reboot', '1');
      assert.equal(other.json().reason, 'idempotency_conflict', 'another path parameter is another request');
    } finally {
      await gw.close();
    }
  });
});

t.test('idempotency, profile B', async (t) => {
  t.test('replays for 24 hours, then the key is new again; no 410', async () => {
    const time = clock();
    const gw = await buildTestGateway({ profile: 'B', stores: createMemoryStores({ now: time.now }) });
    try {
      const first = await order(gw, 'b-1');
      assert.equal(first.statusCode, 201);
      time.advance(23 * HOUR);
      const replay = await order(gw, 'b-1');
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.json().id, first.json().id);
      assert.equal((await order(gw, 'b-1', { ...ORDER, billing_cycle: 'annually' })).json().reason, 'idempotency_conflict');
      time.advance(2 * HOUR);
      const fresh = await order(gw, 'b-1');
      assert.equal(fresh.statusCode, 201);
      assert.equal(fresh.headers['idempotent-replayed'], undefined);
      assert.notEqual(fresh.json().id, first.json().id);
    } finally {
      await gw.close();
    }
  });
});
