/**
 * An account's upstream id is checked at the edge against what its backend can serve: WHMCS and
 * FOSSBilling client ids are whole numbers written in digits (`1`, never `01`, ` 1`, `+1`, `1.0`).
 * Such a spelling was accepted and stored, and every request of the account then failed (502: the
 * mappings refuse it before any call), found by the reseller instead of the operator; it also held a
 * claim of its own beside the customer's real spelling.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { keysCli } from '../../src/cli/keys.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { buildTestGateway } from '../helpers/gateway.js';
import { buildAdminGateway, type AdminGateway } from './helpers.js';

t.test('admin API on WHMCS: an upstream id that is no client id is refused, and nothing written', async (t) => {
  const gw: AdminGateway = await buildAdminGateway();
  t.teardown(() => gw.close());
  for (const spelling of ['01', ' 3', '+3', '3.0', '3 ', 'c-1', '0']) {
    const created = await gw.admin('POST', '/admin/v1/accounts', { body: { id: 'odd', name: 'Odd', upstream_id: spelling } });
    assert.equal(created.statusCode, 400, `${JSON.stringify(spelling)}: ${created.body}`);
    assert.equal(created.json().reason, 'invalid_request');
    assert.match(created.json().errors[0].pointer, /^\/upstream_id$/);
    assert.match(created.json().errors[0].detail, /WHMCS client id/);
    assert.equal(await gw.stores.keys.getAccount('odd'), null);
    const remapped = await gw.admin('PATCH', '/admin/v1/accounts/beta', { body: { upstream_id: spelling } });
    assert.equal(remapped.statusCode, 400, `${JSON.stringify(spelling)}: ${remapped.body}`);
    assert.equal((await gw.stores.keys.getAccount('beta'))?.upstreamId, '2');
  }
  assert.equal((await gw.admin('POST', '/admin/v1/accounts', { body: { id: 'fine', name: 'Fine', upstream_id: '3' } })).statusCode, 201);
});

t.test('key CLI on the sandbox (WHMCS): --upstream-id that is no client id is a usage error', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-accounts-upstream-id-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const cli = async (...args: string[]) => {
    let stderr = '';
    const env: NodeJS.ProcessEnv = { ...process.env, KEYS_FILE: join(dir, 'keys.json'), AUDIT_LOG_FILE: join(dir, 'audit.log'), ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'), CONFIG_FILE: join(process.cwd(), 'config', 'gateway.json') };
    delete env.REDIS_URL;
    const code = await keysCli(BACKENDS, args, { out: () => undefined, err: (text) => (stderr += text), env });
    return { code, stderr };
  };
  const refused = await cli('account', 'add', 'odd', '--name', 'Odd', '--upstream-id', '01');
  assert.equal(refused.code, 64, refused.stderr);
  assert.match(refused.stderr, /--upstream-id must be a WHMCS client id/);
  assert.equal((await cli('account', 'add', 'odd', '--name', 'Odd', '--upstream-id', '1')).code, 0);
});

t.test('an account stored with such a spelling before: the gateway warns at boot, account list marks it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-accounts-unserved-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const keysFile = join(dir, 'keys.json');
  const stored = (id: string, upstreamId: string) => ({ id, name: id, upstreamId, createdAt: '2026-01-01T00:00:00.000Z' });
  writeFileSync(keysFile, JSON.stringify({ accounts: { padded: stored('padded', '01'), fine: stored('fine', '2') }, keys: {} }));
  const gw = await buildTestGateway({ stores: createMemoryStores({ keysFile }), issueKeys: false });
  try {
    const warning = gw.logs.map((line) => JSON.parse(line)).find((line) => /cannot serve/.test(line.msg));
    assert.ok(warning, 'warned at boot');
    assert.match(warning.msg, /: padded\./);
  } finally {
    await gw.close();
  }
  let stdout = '';
  const env: NodeJS.ProcessEnv = { ...process.env, KEYS_FILE: keysFile, AUDIT_LOG_FILE: join(dir, 'audit.log'), ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'), CONFIG_FILE: join(process.cwd(), 'config', 'gateway.json') };
  delete env.REDIS_URL;
  assert.equal(await keysCli(BACKENDS, ['account', 'list'], { out: (text) => (stdout += text), err: () => undefined, env }), 0);
  assert.match(stdout, /^padded .*UPSTREAM ID NOT SERVED \(it must be a WHMCS client id/m);
  assert.doesNotMatch(stdout, /^fine .*NOT SERVED/m);
});

t.test('each backend says which upstream ids it serves', async () => {
  const problem = (backend: string, upstreamId: string) => BACKENDS.find((plugin) => plugin.name === backend)?.upstreamIdProblem(upstreamId);
  for (const backend of ['whmcs', 'fossbilling']) {
    assert.equal(problem(backend, '12'), undefined);
    for (const spelling of ['012', ' 12', '+12', '12.0', '0', 'c-12']) assert.match(problem(backend, spelling) ?? '', /client id/, `${backend} ${spelling}`);
  }
  assert.equal(problem('v1', 'acme-upstream.1'), undefined);
  for (const spelling of [' acme', '-acme', 'acme/1']) assert.match(problem('v1', spelling) ?? '', /account id of the upstream/, spelling);
});
