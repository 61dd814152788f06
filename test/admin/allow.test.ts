/**
 * The admin API's 405 table (src/admin/api.ts) matches paths as the router does: `.` is a dot and
 * a trailing slash is another path, which no endpoint serves (404). Before, `GET /admin/v1/accounts/acme/keys/`
 * answered 405 with an Allow naming GET itself, and a client that follows Allow (RFC 9110 §15.5.6) loops.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildAdminGateway, type AdminGateway } from './helpers.js';

t.test('admin: 405 only where the router serves another method, and never for a method Allow names', async (t) => {
  let gw: AdminGateway;
  t.before(async () => {
    gw = await buildAdminGateway();
  });
  t.teardown(() => gw.close());

  for (const [method, url] of [
    ['GET', '/admin/v1/accounts/acme/keys/'],
    ['HEAD', '/admin/v1/accounts/acme/webhook/deliveries/'],
    ['GET', '/admin/v1/openapiXjson'],
    ['DELETE', '/admin/v1/openapi-json'],
  ] as const) {
    t.test(`${method} ${url}`, async () => {
      const response = await gw.admin(method, url);
      const allow = String(response.headers.allow ?? '').split(', ');
      assert.ok(!(response.statusCode === 405 && allow.includes(method)), `${method} ${url} answered 405 with Allow: ${response.headers.allow}`);
      assert.equal(response.statusCode, 404, `${method} ${url}: ${response.statusCode} ${response.body}`);
    });
  }

  t.test('the served paths keep their 405 and Allow', async () => {
    const response = await gw.admin('PUT', '/admin/v1/accounts/acme');
    assert.equal(response.statusCode, 405);
    assert.equal(response.headers.allow, 'DELETE, GET, HEAD, PATCH');
    assert.equal((await gw.admin('PUT', '/admin/v1/openapi.json')).headers.allow, 'GET, HEAD');
  });
});
