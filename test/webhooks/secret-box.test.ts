/**
 * Webhook secrets at rest (AES-256-GCM): a sealed value opens only with its key and only whole.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { SecretBox } from '../../src/webhooks/secret-box.js';

const box = new SecretBox(randomBytes(32));
const sealed = box.seal('whsec_c2VjcmV0');
const [version, iv, tag, ciphertext] = sealed.split('.') as [string, string, string, string];

t.test('a sealed secret opens with its key', async () => {
  assert.equal(box.open(sealed), 'whsec_c2VjcmV0');
  assert.throws(() => new SecretBox(randomBytes(32)).open(sealed));
});

t.test('an altered ciphertext or tag is refused', async () => {
  const flipped = Buffer.from(ciphertext, 'base64url');
  flipped[0] = (flipped[0] as number) ^ 1;
  assert.throws(() => box.open([version, iv, tag, flipped.toString('base64url')].join('.')));
  assert.throws(() => box.open('v1.x.y'), /not a sealed webhook secret/);
});

t.test('a truncated authentication tag is refused (GCM would check only its first bytes)', async () => {
  for (const bytes of [4, 8, 12, 15]) {
    const short = Buffer.from(tag, 'base64url').subarray(0, bytes).toString('base64url');
    assert.throws(() => box.open([version, iv, short, ciphertext].join('.')), `a ${bytes}-byte tag`);
  }
});
