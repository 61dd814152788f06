/**
 * The request-target limit is 8 KiB (README, REASON_DOCS uri_too_long: "longer than 8,192 bytes"):
 * a target of exactly 8,192 bytes is served, one byte more is 414.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { MAX_TARGET_BYTES } from '../../src/http/unreadable-request.js';
import { bearer, buildTestGateway } from '../helpers/gateway.js';

t.test('a target of exactly 8 KiB is served; one byte more is 414', async (t) => {
  const gw = await buildTestGateway();
  t.teardown(() => gw.close());
  assert.equal(MAX_TARGET_BYTES, 8192);
  const target = (length: number) => {
    const path = '/v1/services?x=';
    return path + 'a'.repeat(length - path.length);
  };
  const atLimit = await gw.app.inject({ method: 'GET', url: target(8192), headers: bearer(gw.keys['acme:all']) });
  assert.notEqual(atLimit.statusCode, 414, atLimit.body);
  const over = await gw.app.inject({ method: 'GET', url: target(8193), headers: bearer(gw.keys['acme:all']) });
  assert.equal(over.statusCode, 414, over.body);
  assert.equal(over.json().reason, 'uri_too_long');
});
