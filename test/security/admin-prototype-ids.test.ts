/**
 * Account ids that are names of Object.prototype (`constructor`, `__proto__`, `toString` …) on the
 * admin API of a gateway without Redis, whose accounts and keys live in the key file (the default
 * store). None of them names an account: each answers 404 like any unknown account, writes
 * nothing, and a new account may take such a name (as on the memory and Redis stores).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { buildAdminGateway, type AdminGateway } from '../admin/helpers.js';

const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];

t.test('admin API over the key file: prototype names are not accounts', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-proto-ids-'));
  let gw: AdminGateway;
  t.before(async () => {
    gw = await buildAdminGateway({ stores: createMemoryStores({ keysFile: join(dir, 'keys.json') }) });
  });
  t.teardown(async () => {
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  });

  let counter = 0;
  const call = (method: string, url: string, body?: unknown) =>
    gw.admin(method, url, { ...(body === undefined ? {} : { body }), headers: { 'idempotency-key': `proto-${++counter}` } });

  for (const id of PROTOTYPE_NAMES) {
    t.test(`${id}: every account route answers 404 and nothing is written`, async () => {
      const keysBefore = await gw.stores.keys.listKeys();
      const accountsBefore = await gw.stores.keys.listAccounts();
      for (const [method, path, body] of [
        ['GET', `/admin/v1/accounts/${id}`],
        ['GET', `/admin/v1/accounts/${id}/keys`],
        ['POST', `/admin/v1/accounts/${id}/keys`, { name: 'k', scopes: ['read:services'] }],
        ['PATCH', `/admin/v1/accounts/${id}`, { name: 'renamed', upstream_id: '2' }],
        ['POST', `/admin/v1/accounts/${id}/disable`],
        ['POST', `/admin/v1/accounts/${id}/enable`],
      ] as Array<[string, string, unknown?]>) {
        const response = await call(method, path, body);
        assert.equal(response.statusCode, 404, `${method} ${path}: ${response.body}`);
        assert.equal(response.json().reason, 'not_found');
      }
      assert.equal((await gw.stores.keys.listKeys()).length, keysBefore.length, 'no key was issued');
      assert.deepEqual(await gw.stores.keys.listAccounts(), accountsBefore, 'no account changed');
    });
  }

  t.test('a new account may be called constructor or toString, as on the other stores', async () => {
    for (const [index, id] of ['constructor', 'toString'].entries()) {
      const created = await call('POST', '/admin/v1/accounts', { id, name: `named ${id}`, upstream_id: String(30 + index) });
      assert.equal(created.statusCode, 201, created.body);
      const read = await call('GET', `/admin/v1/accounts/${id}`);
      assert.equal(read.statusCode, 200, read.body);
      assert.equal(read.json().name, `named ${id}`);
    }
  });
});
