/**
 * Two instances on one Redis whose clocks differ by a few seconds (NTP keeps them close, not equal).
 * A key revoked through one instance must be refused at once on the other (README: "refused at once
 * on every instance"), whichever of the two clocks is behind; a rotation's grace still ends at its time.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { KeyService } from '../../src/keys/key-service.js';
import { AdminService } from '../../src/admin/service.js';
import { keyView } from '../../src/admin/schemas.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import type { Stores } from '../../src/stores/types.js';
import { TEST_PEPPER } from '../helpers/gateway.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';

const SKEW_MS = 3_000;

t.test('revocation across instances whose clocks differ', async (t) => {
  let redis: RedisServer;
  let storesOne: Stores;
  let storesTwo: Stores;
  t.before(async () => {
    redis = await startRedisServer();
    storesOne = await createRedisStores({ url: redis.url });
    storesTwo = await createRedisStores({ url: redis.url });
  });
  t.teardown(async () => {
    await Promise.all([storesOne?.close(), storesTwo?.close()]);
    await redis?.stop();
  });

  // Instance one's clock is right; instance two's runs SKEW_MS behind.
  const one = () => new KeyService(storesOne.keys, TEST_PEPPER, { cacheTtlMs: 60_000 });
  const two = () => new KeyService(storesTwo.keys, TEST_PEPPER, { cacheTtlMs: 60_000, now: () => Date.now() - SKEW_MS });

  const settle = async (service: KeyService, key: string, want: string) => {
    const deadline = Date.now() + 2_000;
    let got: unknown;
    while (Date.now() < deadline) {
      got = await service.authenticate(key);
      if (got === want) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(typeof got === 'string' ? got : 'authenticated', want);
  };

  t.test('a key revoked now on the instance ahead is refused at once on the one behind', async () => {
    const serviceOne = one();
    const serviceTwo = two();
    await serviceOne.createAccount({ id: 'acme', name: 'Acme', upstreamId: '1' });
    const { key, record } = await serviceOne.issue({ accountId: 'acme', name: 'k', scopes: [] });
    assert.equal(typeof (await serviceTwo.authenticate(key)), 'object', 'served and held by instance two');
    await new AdminService({ keys: serviceOne, store: storesOne.keys }).revokeKey(record.id);
    await settle(serviceTwo, key, 'revoked');
  });

  t.test('a rotation with no grace ends the old key at once on the instance behind too', async () => {
    const serviceOne = one();
    const serviceTwo = two();
    const { key, record } = await serviceOne.issue({ accountId: 'acme', name: 'r', scopes: [] });
    assert.equal(typeof (await serviceTwo.authenticate(key)), 'object');
    await new AdminService({ keys: serviceOne, store: storesOne.keys }).rotateKey(record.id, 0);
    await settle(serviceTwo, key, 'revoked');
  });

  t.test('a rotation with a grace keeps the old key until the grace ends, then ends it', async () => {
    const serviceOne = one();
    const { key, record } = await serviceOne.issue({ accountId: 'acme', name: 'g', scopes: [] });
    const rotated = await new AdminService({ keys: serviceOne, store: storesOne.keys }).rotateKey(record.id, 60_000);
    assert.equal(typeof (await two().authenticate(key)), 'object', 'in its grace period');
    assert.equal(keyView(rotated.old).status, 'active');
    const later = new KeyService(storesTwo.keys, TEST_PEPPER, { now: () => Date.now() + 61_000 });
    assert.equal(await later.authenticate(key), 'revoked', 'past its grace');
  });

  t.test('a key revoked now on the instance ahead cannot be rotated on the one behind', async () => {
    const serviceOne = one();
    const { record } = await serviceOne.issue({ accountId: 'acme', name: 'x', scopes: [] });
    await serviceOne.revoke(record.id);
    await assert.rejects(new AdminService({ keys: two(), store: storesTwo.keys }).rotateKey(record.id, 3_600_000), { kind: 'key_inactive' });
  });

  t.test('the admin view of a key revoked now says revoked on the instance behind', async () => {
    const serviceOne = one();
    const { record } = await serviceOne.issue({ accountId: 'acme', name: 'v', scopes: [] });
    const revoked = await serviceOne.revoke(record.id);
    assert.equal(keyView(revoked, Date.now() - SKEW_MS).status, 'revoked');
  });
});
