/**
 * Rotation hands a key's access to a successor. It must never give access back: a revoked or
 * expired key stays refused, and rotating a key already on its way out never extends its life.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { KeyService } from '../../src/keys/key-service.js';
import { MemoryKeyStore } from '../../src/stores/memory/key-store.js';
import { StoreUnavailableError } from '../../src/stores/types.js';
import { SCOPES } from '../../src/keys/scopes.js';

const PEPPER = 'rotate-test-pepper-0123456789abcdef0123456789';
const HOUR = 3_600_000;

async function setup() {
  let now = Date.UTC(2026, 10, 22, 12, 0, 0);
  const store = new MemoryKeyStore();
  const keys = new KeyService(store, PEPPER, { now: () => now, cacheTtlMs: 1 });
  await keys.createAccount({ id: 'acme', name: 'Acme', upstreamId: '1' });
  const issue = (expiresAt: string | null = null) => keys.issue({ accountId: 'acme', name: 'k', scopes: [...SCOPES], expiresAt });
  return { keys, issue, advance: (ms: number) => (now += ms), at: (offsetMs: number) => new Date(now + offsetMs).toISOString() };
}

t.test('key rotation', async (t) => {
  t.test('refuses a revoked key: it stays revoked and no successor is issued', async () => {
    const { keys, issue } = await setup();
    const { record, key } = await issue();
    await keys.revoke(record.id);
    await assert.rejects(keys.rotate(record.id, HOUR), new RegExp(`key ${record.id} is revoked`));
    assert.equal(await keys.authenticate(key), 'revoked');
    assert.equal((await keys.list('acme')).length, 1, 'no successor');
  });

  t.test('a rotation nobody can resume (no successor id) whose old key could not be ended leaves no live successor', async () => {
    const store = new MemoryKeyStore();
    const keys = new KeyService(store, PEPPER, { cacheTtlMs: 1 });
    await keys.createAccount({ id: 'acme', name: 'Acme', upstreamId: '1' });
    const { record, key } = await keys.issue({ accountId: 'acme', name: 'k', scopes: [...SCOPES] });
    const replaceKey = store.replaceKey.bind(store);
    let failures = 1;
    store.replaceKey = async (...args) => {
      if (failures > 0) {
        failures -= 1;
        throw new StoreUnavailableError('the store dropped out (test)');
      }
      return replaceKey(...args);
    };
    await assert.rejects(keys.rotate(record.id, HOUR), StoreUnavailableError);
    const listed = await keys.list('acme');
    assert.equal(listed.length, 2);
    const successor = listed.find((each) => each.id !== record.id);
    assert.ok(successor?.revokedAt !== null && Date.parse(successor?.revokedAt ?? '') <= Date.now(), 'the successor was ended at once');
    assert.equal(await keys.authenticate(key) === 'revoked', false, 'the old key still works: nothing was rotated');
  });

  t.test('an earlier attempt\'s successor is issued again after a grace of 0 ended the old key; another successor is not', async () => {
    const { keys, issue, advance } = await setup();
    const { record, key } = await issue();
    const successorId = '00000000000000a1';
    const first = await keys.rotate(record.id, 0, successorId);
    advance(60_000);
    const again = await keys.rotate(record.id, 0, successorId);
    assert.equal(again.record.id, successorId, 'the same successor');
    assert.notEqual(again.key, first.key, 'with a new secret');
    assert.equal(typeof (await keys.authenticate(again.key)), 'object');
    assert.equal(again.old.revokedAt, first.old.revokedAt, 'the old key keeps the end the first attempt gave it');
    assert.equal(await keys.authenticate(key), 'revoked');
    await assert.rejects(keys.rotate(record.id, 0, '00000000000000a2'), /is revoked/, 'a new rotation of a dead key is still refused');
    assert.equal((await keys.list('acme')).length, 2);
  });

  t.test('refuses an expired key: it stays expired and no successor is issued', async () => {
    const { keys, issue, at } = await setup();
    const { record, key } = await issue(at(-1000));
    await assert.rejects(keys.rotate(record.id, HOUR), new RegExp(`key ${record.id} expired`));
    assert.equal(await keys.authenticate(key), 'expired');
    assert.equal((await keys.list('acme')).length, 1, 'no successor');
  });

  t.test('a key revoked in the grace period of an earlier rotation is refused once it ends', async () => {
    const { keys, issue, advance } = await setup();
    const { record, key } = await issue();
    await keys.rotate(record.id, 60_000);
    advance(60_000);
    await assert.rejects(keys.rotate(record.id, HOUR), /is revoked/);
    assert.equal(await keys.authenticate(key), 'revoked');
  });

  t.test('rotating again within the grace period keeps the earlier end', async () => {
    const { keys, issue, at, advance } = await setup();
    const { record, key } = await issue();
    const end = at(60_000);
    await keys.rotate(record.id, 60_000);
    const again = await keys.rotate(record.id, HOUR);
    assert.equal(again.old.revokedAt, end);
    advance(60_000);
    assert.equal(await keys.authenticate(key), 'revoked');
    assert.notEqual(typeof (await keys.authenticate(again.key)), 'string', 'the new successor works');
  });

  t.test('an active key is rotated: the old one works for the grace period, the new one at once', async () => {
    const { keys, issue, advance } = await setup();
    const { record, key } = await issue();
    const rotated = await keys.rotate(record.id, 60_000);
    assert.notEqual(typeof (await keys.authenticate(key)), 'string');
    assert.notEqual(typeof (await keys.authenticate(rotated.key)), 'string');
    advance(60_000);
    assert.equal(await keys.authenticate(key), 'revoked');
  });
});
