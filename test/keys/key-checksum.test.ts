/**
 * A key ends in a checksum (6 base62 digits of the CRC-32 of all before it): a secret scanner tells
 * a real key from noise offline, and a mistyped or cut key is refused before any store is asked.
 * Keys issued before the checksum existed carry none and keep working.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { keyChecksum, parseApiKey } from '../../src/keys/api-key.js';
import { KeyService } from '../../src/keys/key-service.js';
import { MemoryKeyStore } from '../../src/stores/memory/key-store.js';
import type { ApiKeyRecord } from '../../src/stores/types.js';
import { bearer, buildTestGateway } from '../helpers/gateway.js';

const PEPPER = 'test-pepper-0123456789abcdef0123456789abcdef';

class CountingKeyStore extends MemoryKeyStore {
  reads = 0;
  override async getKey(id: string): Promise<ApiKeyRecord | null> {
    this.reads += 1;
    return super.getKey(id);
  }
}

/** The key with one character of its checksum changed. */
function mistyped(key: string): string {
  const last = key.at(-1) as string;
  return key.slice(0, -1) + (last === 'a' ? 'b' : 'a');
}

t.test('the checksum is the CRC-32 of the key before it in base62, so others can check it', async () => {
  // CRC-32("123456789") is 0xCBF43926 (the standard check value) = 3421780262 = 3jZRME in base62.
  assert.equal(keyChecksum('123456789'), '3jZRME');
  assert.equal(keyChecksum(''), '000000');
});

t.test('a new key carries its checksum; one changed or dropped character is refused unread', async () => {
  const store = new CountingKeyStore();
  const service = new KeyService(store, PEPPER, { issueChecksums: true });
  await service.createAccount({ id: 'acme', name: 'Acme', upstreamId: '1' });
  const { key, record } = await service.issue({ accountId: 'acme', name: 'k', scopes: ['read:products'] });
  assert.match(key, new RegExp(`^rk_${record.id}_[A-Za-z0-9_-]{43}[0-9A-Za-z]{6}$`));
  assert.equal(key.slice(-6), keyChecksum(key.slice(0, -6)));
  assert.equal(typeof (await service.authenticate(key)), 'object');

  const reads = store.reads;
  assert.equal(await service.authenticate(mistyped(key)), 'malformed');
  assert.equal(await service.authenticate(key.slice(0, -1)), 'malformed', 'a key cut short');
  const secretTypo = key.slice(0, 30) + (key[30] === 'x' ? 'y' : 'x') + key.slice(31);
  assert.equal(await service.authenticate(secretTypo), 'malformed', 'a typo in the secret breaks the checksum too');
  assert.equal(store.reads, reads, 'no store read for a key whose checksum does not match');
});

t.test('a key issued before checksums (no checksum) still authenticates', async () => {
  const service = new KeyService(new MemoryKeyStore(), PEPPER, { issueChecksums: true });
  await service.createAccount({ id: 'acme', name: 'Acme', upstreamId: '1' });
  const { key } = await service.issue({ accountId: 'acme', name: 'k', scopes: ['read:products'] });
  const earlier = key.slice(0, -6);
  assert.deepEqual(parseApiKey(earlier), parseApiKey(key));
  assert.equal(typeof (await service.authenticate(earlier)), 'object');
});

t.test('over HTTP: a mistyped key is 401 malformed and its key id is logged; in the query it is still refused', async () => {
  const gw = await buildTestGateway({ config: { logLevel: 'info', keys: { pepper: PEPPER, issueChecksums: true } } });
  try {
    const key = gw.keys['acme:all'] as string;
    const bad = mistyped(key);
    const response = await gw.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(bad) });
    assert.equal(response.statusCode, 401);
    assert.match(String(response.headers['www-authenticate']), /error="invalid_token"/);
    const line = gw.logs
      .join('')
      .split('\n')
      .find((l) => l.includes('"auth_failure":"malformed"'));
    assert.ok(line, 'the refusal is logged as malformed');
    assert.equal(JSON.parse(line).sent_key_id, parseApiKey(key)?.keyId, 'the key id sent is named');
    assert.ok(!gw.logs.join('').includes(key.slice(20, 40)), 'never the secret');

    const inQuery = await gw.app.inject({ method: 'GET', url: `/v1/me?x=${encodeURIComponent(bad)}`, headers: bearer(key) });
    assert.equal(inQuery.statusCode, 400, 'a key with a broken checksum still holds the secret: refused in the query');
  } finally {
    await gw.close();
  }
});
