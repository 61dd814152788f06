/**
 * The previous release reads a key as `rk_<16 hex>_<43 base64url>` exactly: a key with a checksum is
 * malformed there (401). Keys issued while it still runs (a rolling deploy) or before a rollback
 * must stay readable by it, so a checksum is issued only once keys.issueChecksums says so.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { ConfigSchema } from '../../src/config.js';
import { KeyService } from '../../src/keys/key-service.js';
import { MemoryKeyStore } from '../../src/stores/memory/key-store.js';
import { keyChecksum } from '../../src/keys/api-key.js';

const PEPPER = 'test-pepper-0123456789abcdef0123456789abcdef';
/** The previous release's key pattern (src/keys/api-key.ts before checksums). */
const PREVIOUS_RELEASE_KEY = /^rk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

async function issued(options: { issueChecksums?: boolean }): Promise<string> {
  const service = new KeyService(new MemoryKeyStore(), PEPPER, options);
  await service.createAccount({ id: 'acme', name: 'Acme', upstreamId: '1' });
  return (await service.issue({ accountId: 'acme', name: 'k', scopes: ['read:products'] })).key;
}

t.test('by default a new key is one the previous release reads (rolling deploy, rollback)', async () => {
  assert.match(await issued({}), PREVIOUS_RELEASE_KEY);
});

t.test('keys.issueChecksums: new keys carry their checksum, and authenticate', async () => {
  const key = await issued({ issueChecksums: true });
  assert.doesNotMatch(key, PREVIOUS_RELEASE_KEY);
  assert.equal(key.slice(-6), keyChecksum(key.slice(0, -6)));
});

t.test('keys.issueChecksums is off unless configured', async () => {
  const config = ConfigSchema.parse({}) as { keys: Record<string, unknown> };
  assert.equal(config.keys.issueChecksums, false);
});
