/** What counts as a secret pasted into a path, as sent or percent-encoded. */
import assert from 'node:assert/strict';
import t from 'tap';
import { redactPath } from '../../src/secret-like.js';

t.test('redactPath', async () => {
  const key = `rk_${'0123456789abcdef'}_${'s'.repeat(40)}`;
  assert.equal(redactPath('/v1/services/7'), '/v1/services/7');
  assert.equal(redactPath(`/v1/services/${key}`), '/v1/services/[redacted]');
  assert.equal(redactPath(`/v1/services/${key.replace(/_/g, '%5f')}/credentials`), '/v1/services/[redacted]/credentials');
  assert.equal(redactPath(`/v1/services/${encodeURIComponent('x ')}${key.replace('rk_', 'rk%5F')}`), '/v1/services/[redacted]');
  assert.equal(redactPath('/v1/services/%E0%A4%A'), '/v1/services/%E0%A4%A', 'not valid escapes: kept as sent');
  assert.equal(redactPath('/v1/services/acme%5Frk%5F1'), '/v1/services/acme%5Frk%5F1', 'an id, encoded: no secret');
});

t.test('redactPath: a webhook secret is base64, "/" included, and none of it is kept', async () => {
  const secret = 'whsec_3q2+7w/Zm9vYmFy/YmF6cXV4+cXV1eA0KZm9v/YmFyYmF6MTIzNDU2Nzg5MA==';
  assert.equal(redactPath(`/v1/services/${secret}/credentials`), '/v1/services/[redacted]');
  assert.equal(redactPath(`/v1/services/${encodeURIComponent(secret)}`), '/v1/services/[redacted]');
  assert.equal(redactPath(`/v1/services/whsec_${'A'.repeat(10)}/7`), '/v1/services/[redacted]', 'cut: still a secret\'s start');
});
