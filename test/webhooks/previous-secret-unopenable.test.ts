/**
 * After `webhooks.encryptionKey` changed (a deployment given another key), every stored secret is
 * unreadable and each event fails unsent. A reseller recovers with `rotate_secret: true`: the new
 * secret is sealed with the current key, but the old one stays in the record as the previous secret
 * for 24 h, still unreadable. That previous secret alone used to fail every event for those 24 h,
 * although the current secret signs: a secret only kept for the overlap cannot stop delivery.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { newWebhookSecret } from '../../src/webhooks/signing.js';
import { firstAttempts } from '../helpers/worker-harness.js';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');

t.test('a previous secret that cannot be opened does not keep the current one from signing', async (t) => {
  const otherKey = new SecretBox(randomBytes(32));
  const { entries, store } = await firstAttempts(t, { '/rotated': [200] }, {
    now: NOW,
    record: (_path, record) => ({ ...record, previousSecret: otherKey.seal(newWebhookSecret()), previousSecretExpiresAt: new Date(NOW + 3_600_000).toISOString() }),
  });
  assert.equal(entries['/rotated']?.state, 'delivered');
  assert.equal((await store.get('/rotated'))?.lastDelivery?.httpStatus, 200);
});

t.test('a current secret that cannot be opened still fails the event unsent', async (t) => {
  const otherKey = new SecretBox(randomBytes(32));
  const { entries } = await firstAttempts(t, { '/lost': [200] }, {
    now: NOW,
    record: (_path, record) => ({ ...record, secret: otherKey.seal(newWebhookSecret()) }),
  });
  assert.equal(entries['/lost']?.state, 'failed');
  assert.equal(entries['/lost']?.attempts, 0);
});
