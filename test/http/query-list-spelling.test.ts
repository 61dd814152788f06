/**
 * The lists' `page` and `per_page` sent in PHP's or Rails' spelling of a list (`per_page[]=5`, as a
 * WHMCS integration builds its queries) were ignored as unknown names: the client got page 1 at the
 * default size, without a word. A repeated one was refused, but its detail said only that it was
 * not a number. Both are now a 400 that names what to send. A name the list does not take at all is
 * still ignored (docs/contract.md; src/http/pagination.ts).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer, buildTestGateway } from '../helpers/gateway.js';
import { buildAdminGateway } from '../admin/helpers.js';

t.test('a list parameter in bracket spelling or repeated is a clear 400', async (t) => {
  const gw = await buildTestGateway();
  t.teardown(() => gw.close());
  const list = (query: string) => gw.app.inject({ method: 'GET', url: `/v1/services?${query}`, headers: bearer(gw.keys['acme:all']) });

  for (const [query, name] of [
    ['per_page[]=5', 'per_page[]'],
    ['per_page%5B%5D=5', 'per_page[]'],
    ['page[0]=2&per_page=1', 'page[0]'],
    ['page[number]=2', 'page[number]'],
  ] as const) {
    t.test(query, async () => {
      const response = await list(query);
      assert.equal(response.statusCode, 400, `${query}: ${response.statusCode}`);
      assert.equal(response.json().reason, 'invalid_request');
      const [error] = response.json().errors;
      assert.equal(error.pointer, `/query/${name}`);
      assert.match(error.detail, new RegExp(`send ${name.slice(0, name.indexOf('['))}=`));
    });
  }

  t.test('per_page=5&per_page=10 names the repetition', async () => {
    const response = await list('per_page=5&per_page=10');
    assert.equal(response.statusCode, 400);
    assert.deepEqual(response.json().errors, [{ pointer: '/query/per_page', detail: 'is given more than once; send it once' }]);
  });

  t.test('a name the list does not take is still ignored', async () => {
    const response = await list('per_page=1&_=1700000000&Per_Page=7');
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().meta.per_page, 1);
  });
});

t.test('the admin lists refuse it the same way', async (t) => {
  const gw = await buildAdminGateway();
  t.teardown(() => gw.close());
  const response = await gw.admin('GET', '/admin/v1/accounts?per_page[]=5');
  assert.equal(response.statusCode, 400, response.body);
  assert.equal(response.json().errors[0].pointer, '/query/per_page[]');
});
