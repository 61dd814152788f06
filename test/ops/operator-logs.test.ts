/**
 * What an operator on call finds in the log during an incident.
 * - Redis (the shared store) going down and coming back is logged once each way, in both
 *   `rateLimits.onStoreError` modes: fail-closed answered every request 503 with no line at all,
 *   fail-open warned every 10 s and never said it was back.
 * - The account is named where it is known: a 429 storm (or any failure) from one account can be
 *   traced to it from the access line, and the upstream failure line names it.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { StoreUnavailableError } from '../../src/stores/types.js';
import { bearer, buildTestGateway } from '../helpers/gateway.js';

type Line = Record<string, unknown>;
const parse = (logs: string[]): Line[] => logs.flatMap((chunk) => chunk.split('\n')).filter(Boolean).map((line) => JSON.parse(line) as Line);
const appLines = (logs: string[]): Line[] => parse(logs).filter((line) => line.msg !== 'request completed');

for (const mode of ['open', 'closed'] as const) {
  t.test(`Redis down then back (onStoreError: ${mode}): one line when it goes, one when it is back`, async () => {
    const stores = createMemoryStores();
    const hit = stores.rateLimits.hit.bind(stores.rateLimits);
    let down = false;
    stores.rateLimits.hit = (groups) => (down ? Promise.reject(new StoreUnavailableError('Redis unavailable: connect ECONNREFUSED')) : hit(groups));
    const gw = await buildTestGateway({ stores, config: { rateLimits: { onStoreError: mode } } });
    t.teardown(() => gw.close());
    const key = gw.keys['acme:all'] as string;
    assert.equal((await gw.app.inject({ url: '/v1/products', headers: bearer(key) })).statusCode, 200);
    down = true;
    for (let i = 0; i < 20; i++) {
      const response = await gw.app.inject({ url: '/v1/products', headers: bearer(key) });
      assert.equal(response.statusCode, mode === 'closed' ? 503 : 200);
    }
    const during = appLines(gw.logs);
    assert.equal(during.length, 1, `one line for the outage, not one per request: ${JSON.stringify(during)}`);
    const [gone] = during as [Line];
    assert.equal(gone.level, 50, 'Redis down needs an operator: error');
    assert.match(String(gone.msg), /unreachable/);
    assert.match(String(gone.msg), mode === 'closed' ? /503/ : /per instance/);
    assert.match(String(gone.err), /ECONNREFUSED/);

    down = false;
    for (let i = 0; i < 5; i++) assert.equal((await gw.app.inject({ url: '/v1/products', headers: bearer(key) })).statusCode, 200);
    const after = appLines(gw.logs).slice(1);
    assert.equal(after.length, 1, `one line when it is back: ${JSON.stringify(after)}`);
    assert.equal(after[0]?.level, 30);
    assert.match(String(after[0]?.msg), /reachable again/);
  });
}

t.test('a 429 storm from one account: the access lines name the account and key', async () => {
  const gw = await buildTestGateway({});
  t.teardown(() => gw.close());
  const { key, record } = await gw.keyService.issue({ accountId: 'acme', name: 'tight', scopes: ['read:products'], rateLimits: { perMinute: 1, burst: 0 } });
  for (let i = 0; i < 5; i++) await gw.app.inject({ url: '/v1/products', headers: bearer(key) });
  const access = parse(gw.logs).filter((line) => line.msg === 'request completed');
  const limited = access.filter((line) => (line.res as { statusCode: number }).statusCode === 429);
  assert.equal(limited.length, 4);
  for (const line of limited) {
    assert.equal(line.account_id, 'acme', JSON.stringify(line));
    assert.equal(line.key_id, record.id);
  }
  // An unauthenticated request names no account.
  await gw.app.inject({ url: '/v1/products' });
  const last = parse(gw.logs).filter((line) => line.msg === 'request completed').at(-1) as Line;
  assert.equal(last.account_id, undefined);
  assert.equal(last.key_id, undefined);
});

t.test('an upstream failure line names the account of the request', async () => {
  const gw = await buildTestGateway({});
  t.teardown(() => gw.close());
  gw.simulator.inject({ kind: 'http500', action: 'GetClientsDetails', times: 1 } as never);
  const response = await gw.app.inject({ url: '/v1/me', headers: bearer(gw.keys['beta:all'] as string) });
  assert.equal(response.statusCode, 502);
  const failure = parse(gw.logs).find((line) => line.msg === 'upstream failure') as Line;
  assert.ok(failure, gw.logs.join(''));
  assert.equal(failure.request_id, response.headers['x-request-id']);
  assert.equal(failure.account_id, 'beta');
});
