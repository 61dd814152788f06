/**
 * Stale if error: while the key store is unreachable, a key the store confirmed within
 * `staleIfErrorMs` keeps authenticating; an older copy, a key never seen, and a key whose
 * invalidation arrived do not (the store's error is thrown, which the gateway answers with 503).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { KeyService } from '../../src/keys/key-service.js';
import { MemoryKeyStore } from '../../src/stores/memory/key-store.js';
import { StoreUnavailableError, type AccountRecord, type ApiKeyRecord } from '../../src/stores/types.js';

const PEPPER = 'test-pepper-0123456789abcdef0123456789abcdef';
const FRESH_MS = 1_000;
const STALE_MS = 60_000;

/** A memory key store that can be switched off, and can hold a read until told to go on. */
class SwitchableKeyStore extends MemoryKeyStore {
  down = false;
  /** When set, the next getKey (only) waits for it after reading: a lookup in flight. */
  hold: Promise<void> | undefined;

  override async getKey(id: string): Promise<ApiKeyRecord | null> {
    if (this.down) throw new StoreUnavailableError('store down');
    const record = await super.getKey(id);
    const hold = this.hold;
    this.hold = undefined;
    if (hold) await hold;
    // Down meanwhile: the read in flight fails too.
    if (this.down) throw new StoreUnavailableError('store down');
    return record;
  }

  override async getAccount(id: string): Promise<AccountRecord | null> {
    if (this.down) throw new StoreUnavailableError('store down');
    return super.getAccount(id);
  }
}

t.test('key service: stale if error', async (t) => {
  let store: SwitchableKeyStore;
  let now: number;
  let service: KeyService;
  let key: string;
  let keyId: string;

  t.beforeEach(async () => {
    store = new SwitchableKeyStore();
    now = Date.parse('2026-03-01T00:00:00Z');
    service = new KeyService(store, PEPPER, { cacheTtlMs: FRESH_MS, staleIfErrorMs: STALE_MS, now: () => now });
    await service.createAccount({ id: 'acme', name: 'Acme', upstreamId: '1' });
    const issued = await service.issue({ accountId: 'acme', name: 'k', scopes: ['read:products'] });
    key = issued.key;
    keyId = issued.record.id;
  });

  const isKey = (result: unknown) => typeof result === 'object' && result !== null && 'key' in result;

  t.test('a key the store confirmed within the window authenticates while the store is down', async () => {
    assert.ok(isKey(await service.authenticate(key)));
    store.down = true;
    now += STALE_MS - 1;
    assert.ok(isKey(await service.authenticate(key)));
    assert.equal(await service.authenticate(`rk_${keyId}_${'A'.repeat(43)}`), 'unknown', 'the secret is still checked');
  });

  t.test('an older copy does not, and neither does a key never seen', async () => {
    assert.ok(isKey(await service.authenticate(key)));
    const other = await service.issue({ accountId: 'acme', name: 'never used', scopes: [] });
    store.down = true;
    await assert.rejects(service.authenticate(other.key), StoreUnavailableError);
    now += STALE_MS + 1;
    await assert.rejects(service.authenticate(key), StoreUnavailableError);
  });

  t.test('serving a stale copy does not extend it: only the store confirms', async () => {
    assert.ok(isKey(await service.authenticate(key)));
    store.down = true;
    now += STALE_MS / 2;
    assert.ok(isKey(await service.authenticate(key)));
    now += STALE_MS / 2 + 1;
    await assert.rejects(service.authenticate(key), StoreUnavailableError);
  });

  t.test('a revoked key whose invalidation arrived is not served from the copy', async () => {
    assert.ok(isKey(await service.authenticate(key)));
    await service.revoke(keyId);
    store.down = true;
    await assert.rejects(service.authenticate(key), StoreUnavailableError);
  });

  t.test('a lookup that overlapped an invalidation is not kept: it may have read the record from before', async () => {
    let release = () => undefined as void;
    store.hold = new Promise<void>((resolve) => (release = resolve));
    const inFlight = service.authenticate(key);
    // The revocation lands while the read is in flight; the read's record is the old one.
    await service.revoke(keyId);
    release();
    assert.ok(isKey(await inFlight), 'that answer went out before the revocation was known');
    store.down = true;
    await assert.rejects(service.authenticate(key), StoreUnavailableError, 'but it was not cached');
  });

  t.test('a read that fails after an invalidation arrived during it does not fall back to the copy', async () => {
    assert.ok(isKey(await service.authenticate(key)));
    now += FRESH_MS + 1; // no longer fresh: the next request asks the store
    let release = () => undefined as void;
    store.hold = new Promise<void>((resolve) => (release = resolve));
    const inFlight = service.authenticate(key);
    await service.revoke(keyId);
    store.down = true;
    release();
    await assert.rejects(inFlight, StoreUnavailableError, 'the copy held before the read was revoked meanwhile');
  });
});
