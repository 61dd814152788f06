/**
 * authenticateHeld: the hot path's synchronous answer from the copy this process holds. It answers
 * only while the copy is fresh, then exactly what authenticate answers; otherwise it defers to the
 * store (undefined).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { parseApiKey } from '../../src/keys/api-key.js';
import { KeyService } from '../../src/keys/key-service.js';
import { MemoryKeyStore } from '../../src/stores/memory/key-store.js';
import type { ApiKeyRecord } from '../../src/stores/types.js';

const PEPPER = 'test-pepper-0123456789abcdef0123456789abcdef';
const FRESH_MS = 1_000;

class CountingKeyStore extends MemoryKeyStore {
  reads = 0;
  override async getKey(id: string): Promise<ApiKeyRecord | null> {
    this.reads += 1;
    return super.getKey(id);
  }
}

t.test('key service: the held copy', async (t) => {
  let store: CountingKeyStore;
  let now: number;
  let service: KeyService;
  let key: string;
  let keyId: string;

  t.beforeEach(async () => {
    store = new CountingKeyStore();
    now = Date.parse('2026-03-01T00:00:00Z');
    service = new KeyService(store, PEPPER, { cacheTtlMs: FRESH_MS, now: () => now });
    await service.createAccount({ id: 'acme', name: 'Acme', upstreamId: '1' });
    const issued = await service.issue({ accountId: 'acme', name: 'k', scopes: ['read:products'] });
    key = issued.key;
    keyId = issued.record.id;
  });

  t.test('nothing held: the store must be asked', async () => {
    assert.equal(service.authenticateHeld(key), undefined);
    assert.equal(service.authenticateHeld('not a key'), undefined, 'a malformed key is left to authenticate');
  });

  t.test('held and fresh: the same answer as authenticate, without a read', async () => {
    const first = await service.authenticate(key);
    const reads = store.reads;
    assert.deepEqual(service.authenticateHeld(key), first);
    assert.equal(service.authenticateHeld(`rk_${keyId}_${'A'.repeat(43)}`), 'unknown', 'the secret is still checked');
    assert.equal(store.reads, reads);
  });

  t.test('past its freshness it defers; near its end it reads again in the background', async () => {
    await service.authenticate(key);
    now += FRESH_MS * 0.8;
    const reads = store.reads;
    assert.equal(typeof service.authenticateHeld(key), 'object');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(store.reads, reads + 1, 'read ahead');
    now += FRESH_MS;
    assert.equal(service.authenticateHeld(key), undefined);
  });

  t.test('an expired or revoked key held is refused at once', async () => {
    await service.authenticate(key);
    now += 1;
    const expiring = await service.issue({ accountId: 'acme', name: 'e', scopes: [], expiresAt: new Date(now + 10).toISOString() });
    await service.authenticate(expiring.key);
    now += 20;
    assert.equal(service.authenticateHeld(expiring.key), 'expired');
    await service.revoke(keyId);
    assert.equal(service.authenticateHeld(key), undefined, 'the invalidation dropped the copy');
    assert.equal(await service.authenticate(key), 'revoked');
    assert.equal(service.authenticateHeld(key), 'revoked');
  });

  t.test('keys of one account share its record while it is unchanged; a changed record is not shared', async () => {
    const other = await service.issue({ accountId: 'acme', name: 'k2', scopes: ['read:products'] });
    const first = await service.authenticate(key);
    const second = await service.authenticate(other.key);
    assert.ok(typeof first === 'object' && typeof second === 'object');
    assert.equal(first.account, second.account, 'one copy of the account for both keys');
    const account = await store.getAccount('acme');
    await store.putAccount({ ...account!, name: 'Acme renamed' });
    now += FRESH_MS;
    const third = await service.authenticate(other.key);
    assert.ok(typeof third === 'object');
    assert.equal(third.account.name, 'Acme renamed', 'the key read again sees the changed record');
    assert.equal(first.account.name, 'Acme', 'the other copy is not changed under its key');
  });

  t.test('the same secret again is accepted from the held digest; another is refused', async () => {
    assert.equal(typeof (await service.authenticate(key)), 'object');
    assert.equal(typeof service.authenticateHeld(key), 'object', 'from the digest held');
    const { secret } = parseApiKey(key) ?? assert.fail('a key');
    // Without a checksum (as keys issued before it), so that the secret, not the checksum, refuses it.
    const flipped = `rk_${keyId}_${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    assert.equal(service.authenticateHeld(flipped), 'unknown');
    assert.equal(typeof service.authenticateHeld(key), 'object', 'the right secret still passes after a wrong one');
  });
});
