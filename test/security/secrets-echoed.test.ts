/**
 * A client's own key, put where no key belongs, is neither written to the log nor
 * sent back. An X-Request-Id holding a key was written as it came (`client_request_id`); a body
 * field named by a key came back in the 400's `errors[].pointer`, on the public and the admin API;
 * a key sent as a bare query parameter name (`?rk_…`) was served, where a key in the query string is
 * refused (contract §1).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer } from '../helpers/gateway.js';
import { buildAdminGateway, type AdminGateway } from '../admin/helpers.js';

t.test('a key where no key belongs', async (t) => {
  let gw: AdminGateway;
  t.before(async () => {
    gw = await buildAdminGateway({ config: { logLevel: 'trace' } });
  });
  t.teardown(() => gw.close());
  /** The part of a key or token that is its secret. */
  const secretOf = (secret: string) => secret.slice(-24);

  t.test('an X-Request-Id holding the key is not logged as it came', async () => {
    const key = gw.keys['acme:all'] as string;
    const before = gw.logs.length;
    const served = await gw.app.inject({ method: 'GET', url: '/v1/me', headers: { ...bearer(key), 'x-request-id': key } });
    assert.equal(served.statusCode, 200);
    const refused = await gw.app.inject({ method: 'GET', url: '/v1/me', headers: { 'x-request-id': `Bearer ${key}` } });
    assert.equal(refused.statusCode, 401);
    const plain = await gw.app.inject({ method: 'GET', url: '/v1/me', headers: { ...bearer(key), 'x-request-id': 'order-run-42' } });
    assert.equal(plain.statusCode, 200);
    const output = gw.logs.slice(before).join('');
    assert.match(output, /"client_request_id":"order-run-42"/, 'an ordinary request id is still logged');
    assert.match(output, /"client_request_id":"\[redacted\]"/);
    assert.ok(!output.includes(secretOf(key)), 'the key reached the log');
  });

  t.test('a body field named by the key is not echoed in the 400', async () => {
    const key = gw.keys['acme:all'] as string;
    const answer = await gw.app.inject({
      method: 'PUT',
      url: '/v1/webhooks',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      payload: JSON.stringify({ url: 'https://hooks.example.com/in', [key]: true, colour: 'red' }),
    });
    assert.equal(answer.statusCode, 400);
    const pointers = (answer.json().errors as Array<{ pointer: string }>).map((each) => each.pointer).sort();
    assert.deepEqual(pointers, ['/[redacted]', '/colour']);
    assert.ok(!answer.body.includes(secretOf(key)), 'the key came back in the answer');

    const token = gw.tokens.all?.token as string;
    const admin = await gw.admin('POST', '/admin/v1/accounts', { body: { id: 'gamma', name: 'Gamma', upstream_id: '3', [token]: 1 } });
    assert.equal(admin.statusCode, 400);
    assert.deepEqual(admin.json().errors.map((each: { pointer: string }) => each.pointer), ['/[redacted]']);
    assert.ok(!admin.body.includes(secretOf(token)), 'the admin token came back in the answer');
  });

  t.test('a key sent as a bare query parameter name is refused', async () => {
    const key = gw.keys['acme:all'] as string;
    for (const url of [`/v1/services?${key}`, `/v1/services?page=1&${key}=`]) {
      const answer = await gw.app.inject({ method: 'GET', url, headers: bearer(key) });
      assert.equal(answer.statusCode, 400, url);
      assert.equal(answer.json().reason, 'invalid_request');
      assert.match(answer.json().detail, /only in the Authorization header/);
    }
  });
});
