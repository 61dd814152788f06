/**
 * Contract §1: API keys go in the Authorization header only. A query parameter named as a key
 * (api_key, apikey, key, access_token, token) is refused in any spelling of its name, whatever its
 * value: `?API_KEY=…` or `?Token=…` carrying an old, mistyped or foreign credential still puts a
 * secret in URLs, proxies' logs and browser histories, and must be turned away, not ignored.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer, buildTestGateway } from '../helpers/gateway.js';

t.test('key-named query parameters are refused in any case, whatever their value', async (t) => {
  const gw = await buildTestGateway();
  t.teardown(() => gw.close());
  const headers = bearer(gw.keys['acme:all'] as string);
  assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/me', headers })).statusCode, 200);
  for (const query of ['API_KEY=sk_live_123', 'ApiKey=abc', 'Key=abc', 'ACCESS_TOKEN=eyJhbGciOi', 'Token=abc']) {
    const response = await gw.app.inject({ method: 'GET', url: `/v1/me?${query}`, headers });
    assert.equal(response.statusCode, 400, query);
    assert.equal(response.json().reason, 'invalid_request', query);
  }
});
