/**
 * The benchmark's load shape sets up against the stores the gateway uses: hundreds of accounts on
 * the simulator's two customers (as restored records: the one-customer-one-account rule refused
 * their creation, and `npm run bench` stopped at its set-up while every test passed).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { issueKeys } from '../../bench/shape.js';
import { KeyService } from '../../src/keys/key-service.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';

t.test('issueKeys: every key authenticates as its account, accounts sharing the two customers', async () => {
  const stores = createMemoryStores();
  t.teardown(() => stores.close());
  const pepper = 'bench-shape-test-pepper-0123456789';
  const shape = { idPrefix: 'shape', keys: 40, accounts: 10, sourceAddresses: 4 };
  const keys = await issueKeys(stores.keys, pepper, shape, ['read:products']);
  assert.equal(keys.length, 40);
  const accounts = await stores.keys.listAccounts();
  assert.equal(accounts.length, 10);
  assert.deepEqual([...new Set(accounts.map((account) => account.upstreamId))].sort(), ['1', '2']);
  const service = new KeyService(stores.keys, pepper);
  const caller = await service.authenticate(keys[7]?.key ?? '');
  assert.ok(typeof caller === 'object', `authenticated: ${String(caller)}`);
  assert.equal(caller.account.id, keys[7]?.accountId);
});
