/**
 * Offboarding a reseller: an operator deletes an account (admin API DELETE, key CLI `account
 * delete`). Its keys stop working at once on every instance (their cached lookups too), its upstream
 * customer is free for another account, its webhook endpoint is gone, the call is audited, and an
 * account id, once deleted, is not used again (what is kept under it would reach the new holder).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { startWhmcsSimulator, type WhmcsSimulator } from '../../simulators/whmcs/server.js';
import { keysCli } from '../../src/cli/keys.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { bearer, TEST_PEPPER } from '../helpers/gateway.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';
import { buildAdminGateway, mintTokenSet, type AdminGateway } from './helpers.js';

t.test('admin API: deleting an account, on two instances sharing Redis', async (t) => {
  let redis: RedisServer;
  let simulator: WhmcsSimulator;
  let one: AdminGateway;
  let two: AdminGateway;
  t.before(async () => {
    redis = await startRedisServer();
    simulator = await startWhmcsSimulator();
    const tokens = mintTokenSet();
    // Lookups cached for a minute: a refusal within the test can only come from the invalidation.
    const config = { keys: { pepper: TEST_PEPPER, cacheTtlMs: 60_000 } };
    one = await buildAdminGateway({ simulator, tokens, config, stores: await createRedisStores({ url: redis.url }) });
    two = await buildAdminGateway({ simulator, tokens, config, stores: await createRedisStores({ url: redis.url }), issueKeys: false });
  });
  t.teardown(async () => {
    await Promise.all([one?.close(), two?.close()]);
    await simulator?.close();
    await redis?.stop();
  });

  const v1 = (gw: AdminGateway, key: string, method = 'GET', url = '/v1/services', payload?: object) =>
    gw.app.inject({ method: method as 'GET', url, headers: { ...bearer(key), ...(payload ? { 'content-type': 'application/json' } : {}) }, ...(payload ? { payload: JSON.stringify(payload) } : {}) });

  t.test('its keys are refused at once everywhere, its customer and id are free, its endpoint gone', async () => {
    assert.equal((await one.admin('POST', '/admin/v1/accounts', { body: { id: 'leaving', name: 'Leaving', upstream_id: '3' } })).statusCode, 201);
    const issued = await one.admin('POST', '/admin/v1/accounts/leaving/keys', { body: { name: 'k', scopes: ['read:services', 'write:webhooks'] }, headers: { 'idempotency-key': 'leaving-1' } });
    assert.equal(issued.statusCode, 201, issued.body);
    const key = issued.json().key as string;
    assert.equal((await v1(two, key)).statusCode, 200, 'served, and cached on the other instance');
    const hooked = await v1(one, key, 'PUT', '/v1/webhooks', { url: 'https://hooks.example.com/leaving' });
    assert.ok(hooked.statusCode < 300, hooked.body);

    const deleted = await one.admin('DELETE', '/admin/v1/accounts/leaving');
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.equal(deleted.json().id, 'leaving');

    assert.equal((await v1(one, key)).statusCode, 401, 'refused by the instance that acted, at once');
    // The other hears of it over pub/sub: within a second, its minute-long cache notwithstanding.
    const started = Date.now();
    let there = await v1(two, key);
    while (there.statusCode !== 401 && Date.now() - started < 1_000) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      there = await v1(two, key);
    }
    assert.equal(there.statusCode, 401, 'refused by the other instance');
    assert.equal((await one.admin('GET', '/admin/v1/accounts/leaving')).statusCode, 404);
    assert.deepEqual(await one.stores.keys.listKeys('leaving'), []);
    assert.equal(await one.stores.webhooks.get('leaving'), null, 'its webhook endpoint is gone');
    assert.equal((await two.admin('DELETE', '/admin/v1/accounts/leaving')).json().reason, 'not_found');

    const heir = await two.admin('POST', '/admin/v1/accounts', { body: { id: 'heir', name: 'Heir', upstream_id: '3' } });
    assert.equal(heir.statusCode, 201, `its customer is free: ${heir.body}`);
    const again = await one.admin('POST', '/admin/v1/accounts', { body: { id: 'leaving', name: 'Someone else', upstream_id: '4' } });
    assert.equal(again.statusCode, 409, again.body);
    assert.equal(again.json().reason, 'account_exists', 'the id of a deleted account is not used again');
    assert.equal((await v1(two, key)).statusCode, 401);

    const audited = one.adminAudit.records.filter((record) => record.operation === 'deleteAccount');
    assert.deepEqual(audited.map((record) => [record.account_id, record.outcome]), [['leaving', 'done']]);
  });

  t.test('deleting needs admin:accounts', async () => {
    const refused = await one.admin('DELETE', '/admin/v1/accounts/beta', { token: 'other:admin:accounts' });
    assert.equal(refused.statusCode, 403);
    assert.equal((await one.admin('GET', '/admin/v1/accounts/beta')).statusCode, 200);
  });
});

t.test('key CLI: account delete', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-accounts-delete-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const keysFile = join(dir, 'keys.json');
  const cli = async (...args: string[]) => {
    let stdout = '';
    let stderr = '';
    const env: NodeJS.ProcessEnv = { ...process.env, KEYS_FILE: keysFile, AUDIT_LOG_FILE: join(dir, 'audit.log'), ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'), CONFIG_FILE: join(process.cwd(), 'config', 'gateway.json') };
    delete env.REDIS_URL;
    const code = await keysCli(BACKENDS, args, { out: (text) => (stdout += text), err: (text) => (stderr += text), env });
    return { code, stdout, stderr };
  };
  assert.equal((await cli('account', 'add', 'gone', '--name', 'Gone', '--upstream-id', '21')).code, 0);
  assert.equal((await cli('issue', '--account', 'gone', '--name', 'k', '--scopes', 'all')).code, 0);
  const deleted = await cli('account', 'delete', 'gone', '--json');
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.equal(JSON.parse(deleted.stdout).id, 'gone');
  assert.equal(JSON.parse((await cli('list', '--json')).stdout).length, 0, 'its keys are gone');
  assert.equal((await cli('account', 'add', 'next', '--name', 'Next', '--upstream-id', '21')).code, 0, 'its customer is free');
  assert.equal((await cli('account', 'delete', 'gone')).code, 1, 'an unknown account');
});
