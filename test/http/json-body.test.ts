/**
 * The JSON body parser (src/http/json-body.ts) beyond the input sweep (test/security/input.test.ts):
 * - the charset is read as RFC 9110 §5.6.6 writes parameters: a quoted-string may hold `;`
 *   (`profile="urn:x;charset=utf-16"` declares no charset) and quoted-pairs (`"utf\-8"` is utf-8);
 * - a JSON escape of a lone UTF-16 surrogate (`"\ud800"`, RFC 8259 §8.2; I-JSON forbids it) is
 *   six ASCII bytes, so it passes the UTF-8 check, but the string it makes has no UTF-8 form: stored
 *   (a webhook URL, an admin name) it became U+FFFD. It is refused as bytes that are not UTF-8 are.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer, buildTestGateway, type TestGateway } from '../helpers/gateway.js';
import { buildAdminGateway, type AdminGateway } from '../admin/helpers.js';

t.test('the charset is read from the Content-Type as RFC 9110 writes parameters', async (t) => {
  let gw: TestGateway;
  t.before(async () => {
    gw = await buildTestGateway();
  });
  t.teardown(() => gw.close());

  const put = (contentType: string) =>
    gw.app.inject({
      method: 'PUT',
      url: '/v1/webhooks',
      headers: { ...bearer(gw.keys['acme:all']), 'content-type': contentType },
      payload: JSON.stringify({ url: null }),
    });

  for (const contentType of [
    'application/json; profile="urn:example;charset=utf-16"',
    'application/json; charset="utf\\-8"',
  ]) {
    t.test(contentType, async () => {
      const response = await put(contentType);
      assert.equal(response.statusCode, 200, `${contentType}: ${response.statusCode} ${response.body}`);
    });
  }

  t.test('a charset other than UTF-8 is still 415', async () => {
    assert.equal((await put('application/json; profile="x"; charset=utf-16')).statusCode, 415);
    assert.equal((await put('application/json; charset="iso-8859-1"')).statusCode, 415);
  });
});

t.test('a JSON escape of a lone surrogate is refused like bytes that are not UTF-8', async (t) => {
  let gw: AdminGateway;
  t.before(async () => {
    gw = await buildAdminGateway();
  });
  t.teardown(() => gw.close());

  t.test('PUT /v1/webhooks: 400, nothing stored (it was stored as .../a%EF%BF%BDb)', async () => {
    const before = await gw.stores.webhooks.get('acme');
    const response = await gw.app.inject({
      method: 'PUT',
      url: '/v1/webhooks',
      headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json' },
      // The escape as it travels: six ASCII bytes, valid UTF-8.
      payload: '{"url":"https://hooks.example.com/a\\udc00b"}',
    });
    assert.equal(response.statusCode, 400, `answered ${response.statusCode}: ${response.body}`);
    assert.equal(response.json().reason, 'invalid_request');
    assert.deepEqual(await gw.stores.webhooks.get('acme'), before, 'the subscription is unchanged');
  });

  /** An admin account created from this JSON text, as sent. */
  const createAccount = (text: string) =>
    gw.ops.inject({
      method: 'POST',
      url: '/admin/v1/accounts',
      headers: { authorization: `Bearer ${gw.tokens.all?.token}`, 'content-type': 'application/json' },
      payload: text,
    });

  t.test('POST /admin/v1/accounts: 400, no account', async () => {
    const response = await createAccount('{"id":"surrogate","name":"M\\udc00ller","upstream_id":"3"}');
    assert.equal(response.statusCode, 400, `answered ${response.statusCode}: ${response.body}`);
    assert.equal(await gw.stores.keys.getAccount('surrogate'), null);
  });

  t.test('a well-formed pair written as escapes is still read (U+1F600)', async () => {
    const response = await createAccount('{"id":"pair","name":"Smile \\ud83d\\ude00","upstream_id":"3"}');
    assert.equal(response.statusCode, 201, response.body);
    assert.equal((await gw.stores.keys.getAccount('pair'))?.name, 'Smile \u{1F600}');
  });
});
