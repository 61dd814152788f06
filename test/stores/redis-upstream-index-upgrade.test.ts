/**
 * A Redis key store written by a release before the upstream index: accounts already sharing a
 * customer, and no index. After the upgrade they still authenticate, the first write builds the
 * index from the records (both listed), and a newcomer on their customer is refused.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { Redis } from 'ioredis';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { UpstreamClaimedError, type AccountRecord, type ApiKeyRecord } from '../../src/stores/types.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';

let server: RedisServer;
t.before(async () => {
  server = await startRedisServer();
});
t.teardown(() => server.stop());

const account = (id: string, upstreamId: string): AccountRecord => ({ id, name: id, upstreamId, createdAt: '2026-01-01T00:00:00.000Z' });
const key: ApiKeyRecord = {
  id: '0123456789abcdef',
  accountId: 'second',
  name: 'ci',
  scopes: ['read:products'],
  secretHash: 'ab'.repeat(32),
  createdAt: '2026-01-01T00:00:00.000Z',
  expiresAt: null,
  revokedAt: null,
  rateLimits: null,
};

t.test('accounts that shared a customer before the upgrade keep working and keep it', async () => {
  const keyPrefix = 'upgrade:';
  const raw = new Redis(server.url);
  // As the previous release wrote them: records only.
  await raw.hset(`${keyPrefix}{keys}:accounts`, 'first', JSON.stringify(account('first', '21')), 'second', JSON.stringify(account('second', '21')));
  await raw.hset(`${keyPrefix}{keys}:keys`, key.id, JSON.stringify(key));
  const stores = await createRedisStores({ url: server.url, keyPrefix });
  try {
    const store = stores.keys;
    assert.equal((await store.getKeyWithAccount(key.id))?.account.id, 'second', 'authentication reads as before');
    await assert.rejects(store.replaceAccount(account('third', '21'), null), UpstreamClaimedError);
    // In the records' order, which a hash of values this long does not keep.
    const indexed = JSON.parse((await raw.hget(`${keyPrefix}{keys}:upstream-accounts`, '21')) ?? '[]') as string[];
    assert.deepEqual(indexed.sort(), ['first', 'second'], 'built from the records');
    const first = (await store.getAccount('first')) as AccountRecord;
    assert.equal(await store.replaceAccount({ ...first, upstreamId: '22' }, first), true);
    await assert.rejects(store.replaceAccount(account('third', '21'), null), (error: unknown) => error instanceof UpstreamClaimedError && error.holder === 'second');
    const second = (await store.getAccount('second')) as AccountRecord;
    assert.equal(await store.replaceAccount({ ...second, upstreamId: '24' }, second), true);
    assert.equal(await store.replaceAccount(account('third', '21'), null), true, 'free once both moved away');
  } finally {
    raw.disconnect();
    await stores.close();
  }
});

t.test('an account an instance of the previous release creates after the index was built (a rolling deploy) still holds its customer', async () => {
  const keyPrefix = 'rolling:';
  const raw = new Redis(server.url);
  const stores = await createRedisStores({ url: server.url, keyPrefix });
  try {
    const store = stores.keys;
    assert.equal(await store.replaceAccount(account('new-1', '31'), null), true, 'the index is built');
    // The previous release writes the record alone.
    await raw.hset(`${keyPrefix}{keys}:accounts`, 'old-1', JSON.stringify(account('old-1', '32')));
    await assert.rejects(
      store.replaceAccount(account('new-2', '32'), null),
      (error: unknown) => error instanceof UpstreamClaimedError && error.holder === 'old-1',
    );
  } finally {
    raw.disconnect();
    await stores.close();
  }
});
