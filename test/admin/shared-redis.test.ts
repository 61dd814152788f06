/**
 * The admin API in the production shape: two gateway instances on one Redis (the harness's own
 * server). What one instance's admin API does takes effect on the other at once: a new account and
 * key serve v1 requests, a revoked key and a disabled account's keys are refused; an issue retried
 * with the same Idempotency-Key (on either instance) answers the same key and makes one.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { Redis } from 'ioredis';
import { startWhmcsSimulator, type WhmcsSimulator } from '../../simulators/whmcs/server.js';
import { parseApiKey } from '../../src/keys/api-key.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { bearer, TEST_PEPPER } from '../helpers/gateway.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';
import { buildAdminGateway, mintTokenSet, type AdminGateway } from './helpers.js';

t.test('admin API on two instances sharing Redis', async (t) => {
  let redis: RedisServer;
  let simulator: WhmcsSimulator;
  let one: AdminGateway;
  let two: AdminGateway;

  t.before(async () => {
    redis = await startRedisServer();
    simulator = await startWhmcsSimulator();
    const tokens = mintTokenSet();
    // Key lookups cached for a minute: a refusal within the test can only come from the invalidation.
    const config = { keys: { pepper: TEST_PEPPER, cacheTtlMs: 60_000 } };
    one = await buildAdminGateway({ simulator, tokens, config, stores: await createRedisStores({ url: redis.url }) });
    two = await buildAdminGateway({ simulator, tokens, config, stores: await createRedisStores({ url: redis.url }), issueKeys: false });
  });
  t.teardown(async () => {
    await Promise.all([one?.close(), two?.close()]);
    await simulator?.close();
    await redis?.stop();
  });

  const v1 = (gw: AdminGateway, key: string, url = '/v1/services') => gw.app.inject({ method: 'GET', url, headers: bearer(key) });
  const issue = (gw: AdminGateway, account: string, idempotencyKey: string, body: object = { name: 'panel-key', scopes: ['read:services'] }) =>
    gw.admin('POST', `/admin/v1/accounts/${account}/keys`, { body, headers: { 'idempotency-key': idempotencyKey } });

  t.test('an account created and a key issued on one instance serve a v1 request on the other at once', async () => {
    const created = await one.admin('POST', '/admin/v1/accounts', { body: { id: 'gamma', name: 'Gamma Hosting', upstream_id: '3' } });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.headers.location, '/admin/v1/accounts/gamma');
    assert.deepEqual({ ...(created.json() as object), created_at: undefined }, { id: 'gamma', name: 'Gamma Hosting', upstream_id: '3', status: 'active', created_at: undefined, disabled_at: null });
    const issued = await issue(one, 'gamma', 'gamma-first-key');
    assert.equal(issued.statusCode, 201, issued.body);
    const key = issued.json().key as string;
    assert.match(key, new RegExp(`^rk_${issued.json().id}_`));

    const served = await v1(two, key);
    assert.equal(served.statusCode, 200, served.body);
    const services = served.json().data as Array<{ id: string }>;
    assert.ok(services.length > 0);
    const own = simulator.state.services.filter((service) => service.clientId === 3).map((service) => String(service.id));
    for (const service of services) assert.ok(own.includes(service.id), `service ${service.id} is client 3's`);
  });

  t.test('a retried issue with the same Idempotency-Key answers the same key and makes one, on either instance', async () => {
    const first = await issue(one, 'acme', 'acme-ci-1');
    assert.equal(first.statusCode, 201, first.body);
    const again = await issue(two, 'acme', 'acme-ci-1');
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), first.json(), 'the same answer, the full key included');
    const named = (await one.stores.keys.listKeys('acme')).filter((record) => record.name === 'panel-key');
    assert.deepEqual(named.map((record) => record.id), [first.json().id], 'one key');
    assert.equal((await v1(two, again.json().key)).statusCode, 200);

    const other = await issue(one, 'acme', 'acme-ci-1', { name: 'another', scopes: [] });
    assert.equal(other.statusCode, 409);
    assert.equal(other.json().reason, 'idempotency_conflict');
  });

  t.test("the stored answer holds the key only sealed: Redis never has it in clear", async () => {
    const issued = await issue(one, 'beta', 'beta-sealed-1');
    assert.equal(issued.statusCode, 201);
    const client = new Redis(redis.url);
    try {
      const secret = parseApiKey(issued.json().key as string)?.secret ?? assert.fail('a key');
      assert.equal(secret.length, 43);
      const keys = await client.keys('*');
      assert.ok(keys.some((name) => name.includes('idem:admin%2Fbeta-sealed-1')), 'the record is there');
      for (const name of keys) {
        const type = await client.type(name);
        const dump = type === 'hash' ? JSON.stringify(await client.hgetall(name)) : type === 'string' ? await client.get(name) : '';
        assert.ok(!String(dump).includes(secret), `${name} holds the key's secret`);
      }
    } finally {
      client.disconnect();
    }
  });

  t.test('a key revoked through one instance is refused at once on both', async () => {
    const issued = (await issue(one, 'beta', 'beta-doomed')).json();
    assert.equal((await v1(two, issued.key)).statusCode, 200, 'cached on instance two');
    assert.equal((await v1(one, issued.key)).statusCode, 200, 'cached on instance one');
    const revoked = await two.admin('POST', `/admin/v1/keys/${issued.id}/revoke`);
    assert.equal(revoked.statusCode, 200, revoked.body);
    assert.equal(revoked.json().status, 'revoked');
    await answersOnBoth(two, issued.key, 401, 'The API key has been revoked.');
  });

  t.test("a disabled account's keys are refused at once on both; enabled again, they work", async () => {
    const issued = (await issue(one, 'gamma', 'gamma-second')).json();
    assert.equal((await v1(one, issued.key)).statusCode, 200);
    assert.equal((await v1(two, issued.key)).statusCode, 200);
    const disabled = await one.admin('POST', '/admin/v1/accounts/gamma/disable');
    assert.equal(disabled.json().status, 'disabled');
    await answersOnBoth(one, issued.key, 401, "The API key's account is disabled.");
    const refusedIssue = await issue(two, 'gamma', 'gamma-while-disabled');
    assert.equal(refusedIssue.statusCode, 409);
    assert.equal(refusedIssue.json().reason, 'account_disabled');

    assert.equal((await two.admin('POST', '/admin/v1/accounts/gamma/enable')).json().status, 'active');
    await answersOnBoth(two, issued.key, 200);
  });

  t.test('a rotated key: the successor works on both at once, the old one until its grace ends', async () => {
    const issued = (await issue(one, 'acme', 'acme-rotate-me', { name: 'rotating', scopes: ['read:services'] })).json();
    const rotated = await two.admin('POST', `/admin/v1/keys/${issued.id}/rotate`, { body: { grace_seconds: 3600 }, headers: { 'idempotency-key': 'rotate-1' } });
    assert.equal(rotated.statusCode, 201, rotated.body);
    const { old, new: successor } = rotated.json();
    assert.equal(old.status, 'active', 'in its grace period');
    assert.ok(Date.parse(old.revoked_at) > Date.now() + 3_500_000);
    assert.deepEqual([successor.account_id, successor.name, successor.scopes], ['acme', 'rotating', ['read:services']]);
    assert.equal((await v1(one, successor.key)).statusCode, 200);
    assert.equal((await v1(two, issued.key)).statusCode, 200);
    const replay = await one.admin('POST', `/admin/v1/keys/${issued.id}/rotate`, { body: { grace_seconds: 3600 }, headers: { 'idempotency-key': 'rotate-1' } });
    assert.equal(replay.json().new.id, successor.id, 'a retry answers the same successor');
    assert.equal((await one.stores.keys.listKeys('acme')).filter((record) => record.name === 'rotating').length, 2);
  });

  /**
   * `acting` answered the admin call: it answers the key accordingly before its answer left. The
   * other instance hears of it over pub/sub: within milliseconds, long before its cached copy of
   * the key would expire.
   */
  async function answersOnBoth(acting: AdminGateway, key: string, status: number, detail?: string): Promise<void> {
    const here = await v1(acting, key);
    assert.equal(here.statusCode, status, 'by the instance that acted, at once');
    if (detail) assert.equal(here.json().detail, detail);
    const other = acting === one ? two : one;
    const started = Date.now();
    let there = await v1(other, key);
    while (there.statusCode !== status && Date.now() - started < 1_000) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      there = await v1(other, key);
    }
    assert.equal(there.statusCode, status, 'by the other instance within a second, its cache notwithstanding');
    if (detail) assert.equal(there.json().detail, detail);
  }
});
