/**
 * `GET /v1/services/` (a trailing slash, as many HTTP clients add when joining a base URL) reached
 * `/v1/services/{id}` with an empty id, and was answered 400 "The path is invalid." The contract's
 * answer for a path no route serves is 404 `not_found` (contract §2), as `/v1/services/1/` already
 * gets. An id that is there but malformed is still 400.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer, buildTestGateway } from '../helpers/gateway.js';
import { buildAdminGateway } from '../admin/helpers.js';

t.test('an empty path segment where an id goes is 404 not_found', async (t) => {
  const gw = await buildTestGateway();
  t.teardown(() => gw.close());
  const headers = bearer(gw.keys['acme:all']);

  for (const url of ['/v1/services/', '/v1/orders/', '/v1/products/', '/v1/services//credentials', '/v1/billing/invoices//pdf']) {
    t.test(`GET ${url}`, async () => {
      const response = await gw.app.inject({ method: 'GET', url, headers });
      assert.equal(response.statusCode, 404, `${url}: ${response.body}`);
      assert.equal(response.json().reason, 'not_found');
    });
  }

  t.test('POST /v1/services//actions', async () => {
    const response = await gw.app.inject({
      method: 'POST',
      url: '/v1/services//actions',
      headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': 'trailing-slash-1' },
      payload: JSON.stringify({ action: 'reboot' }),
    });
    assert.equal(response.statusCode, 404, response.body);
    assert.equal(response.json().reason, 'not_found');
  });

  t.test('a malformed id is still 400, pointing at it', async () => {
    const response = await gw.app.inject({ method: 'GET', url: '/v1/services/abc', headers });
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().errors[0].pointer, '/path/id');
  });
});

t.test('the admin API answers its empty ids 404 too', async (t) => {
  const gw = await buildAdminGateway();
  t.teardown(() => gw.close());
  for (const url of ['/admin/v1/accounts/', '/admin/v1/accounts//keys']) {
    const response = await gw.admin('GET', url);
    assert.equal(response.statusCode, 404, `${url}: ${response.body}`);
    assert.equal(response.json().reason, 'not_found', url);
  }
});
