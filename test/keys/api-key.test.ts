/**
 * The Authorization header's Bearer credentials (RFC 9110 §11.6.2: `auth-scheme [ 1*SP token68 ]`,
 * the scheme's name in any case): read for v1 keys and admin tokens alike.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearerKey, isBearerScheme } from '../../src/keys/api-key.js';

t.test('one or more spaces after the scheme, in any case', async () => {
  for (const header of ['Bearer rk_x', 'bearer rk_x', 'BEARER rk_x', 'Bearer  rk_x', 'Bearer   rk_x']) assert.equal(bearerKey(header), 'rk_x', header);
});

t.test('anything else is no Bearer credential', async () => {
  for (const header of ['Bearer', 'Bearer ', 'Bearerrk_x', 'Bearer\trk_x', 'Bearer rk_x extra', ' Bearer rk_x', 'Basic rk_x', 'Bearer rk_x ']) {
    assert.equal(bearerKey(header), undefined, JSON.stringify(header));
  }
  assert.equal(bearerKey(undefined), undefined);
  assert.equal(bearerKey(null), undefined);
});

t.test('the Bearer scheme, whatever follows it', async () => {
  for (const header of ['Bearer', 'bearer x', 'BEARER  x y', 'Bearer not-a-key']) assert.equal(isBearerScheme(header), true, header);
  for (const header of ['Basic eA==', 'Bearerx', 'rk_x', 'Digest a=b', '']) assert.equal(isBearerScheme(header), false, header);
});
