import assert from 'node:assert/strict';
import t from 'tap';
import { buildAdminGateway } from '../admin/helpers.js';
import { bearer, buildTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Contract §2: `type` is an absolute URI that ends in the reason. An operator who writes the
 * configured base without a trailing slash (`https://api.example.com/problems`) got
 * `https://api.example.com/problemsnot_found`: a URI whose last segment is not the reason, which
 * points nowhere. The base names a folder of reasons, whichever way it is written.
 */
t.test('problemTypeBase without a trailing slash still ends each type in /<reason>', async (t) => {
  let gw: TestGateway;
  t.before(async () => {
    gw = await buildTestGateway({ config: { problemTypeBase: 'https://api.example.com/problems' } });
  });
  t.teardown(() => gw.close());

  t.test('a route problem', async () => {
    const response = await gw.app.inject({ method: 'GET', url: '/v1/nope' });
    assert.equal(response.json().type, 'https://api.example.com/problems/not_found');
  });

  t.test('an authentication problem', async () => {
    const response = await gw.app.inject({ method: 'GET', url: '/v1/me', headers: bearer('rk_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA') });
    assert.equal(response.statusCode, 401);
    assert.equal(response.json().type, 'https://api.example.com/problems/unauthenticated');
  });

  t.test('the OpenAPI examples show the same types', async () => {
    const document = (await gw.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const example = document.paths['/v1/me'].get.responses['401'].content['application/problem+json'].example;
    assert.equal(example.type, 'https://api.example.com/problems/unauthenticated');
  });

  t.test('a base that already ends in a separator is kept as written', async () => {
    for (const base of ['https://api.example.com/problems/', 'https://api.example.com/problems#', 'urn:example:problem:']) {
      const other = await buildTestGateway({ simulator: gw.simulator, issueKeys: false, config: { problemTypeBase: base } });
      try {
        const response = await other.app.inject({ method: 'GET', url: '/v1/nope' });
        assert.equal(response.json().type, `${base}not_found`);
      } finally {
        await other.close();
      }
    }
  });
});

t.test('the admin API answers and documents the same types', async () => {
  const gw = await buildAdminGateway({ config: { problemTypeBase: 'https://api.example.com/problems' } });
  try {
    const refused = await gw.admin('GET', '/admin/v1/accounts', { token: null });
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.json().type, 'https://api.example.com/problems/unauthenticated');
    const document = (await gw.admin('GET', '/admin/v1/openapi.json')).json();
    const example = document.paths['/admin/v1/accounts'].get.responses['401'].content['application/problem+json'].example;
    assert.equal(example.type, 'https://api.example.com/problems/unauthenticated');
  } finally {
    await gw.close();
  }
});
