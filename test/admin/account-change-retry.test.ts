/**
 * An account change whose invalidation could not be published (Redis dropped the PUBLISH) answers
 * an error; the operator retries. The retry finds the change already written and must still
 * announce it, or other instances keep serving their copies of the account's keys until the
 * cache's time to live ends (60 s by default), while the retry answered success.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { AdminService } from '../../src/admin/service.js';
import { KeyService } from '../../src/keys/key-service.js';
import { MemoryKeyStore } from '../../src/stores/memory/key-store.js';
import { StoreUnavailableError } from '../../src/stores/types.js';

const PEPPER = 'review-pepper-0123456789abcdef0123456789abcdef';

async function setup() {
  const store = new MemoryKeyStore();
  // Another gateway instance: it hears the store's invalidations, and holds copies for a minute.
  const gateway = new KeyService(store, PEPPER, { cacheTtlMs: 60_000 });
  // The operator's instance, whose first announcement is lost.
  let failures = 1;
  const operatorStore = Object.create(store) as MemoryKeyStore;
  operatorStore.publishInvalidation = async (keyId) => {
    if (failures-- > 0) throw new StoreUnavailableError('PUBLISH timed out');
    return store.publishInvalidation(keyId);
  };
  const keys = new KeyService(operatorStore, PEPPER);
  const admin = new AdminService({ keys, store: operatorStore });
  await keys.createAccount({ id: 'acme', name: 'Acme', upstreamId: '1' });
  const { key } = await keys.issue({ accountId: 'acme', name: 'k', scopes: ['read:services'] });
  assert.equal(typeof (await gateway.authenticate(key)), 'object', 'the gateway holds the key');
  return { gateway, admin, key };
}

t.test('a disable retried after its announcement failed reaches the other instances', async () => {
  const { gateway, admin, key } = await setup();
  await assert.rejects(admin.setAccountDisabled('acme', true), StoreUnavailableError);
  await admin.setAccountDisabled('acme', true);
  assert.equal(gateway.authenticateHeld(key), undefined, 'the copy is dropped');
  assert.equal(await gateway.authenticate(key), 'account_disabled');
});

t.test('an upstream change retried after its announcement failed reaches the other instances', async () => {
  const { gateway, admin, key } = await setup();
  await assert.rejects(admin.updateAccount('acme', { upstreamId: '7' }), StoreUnavailableError);
  await admin.updateAccount('acme', { upstreamId: '7' });
  const found = await gateway.authenticate(key);
  assert.equal(typeof found === 'object' && found.account.upstreamId, '7', 'the key serves the new customer');
});
