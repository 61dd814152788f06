/**
 * Who may call what, over every admin route (the table is the admin API's own list, so a new route
 * is covered the day it is added): no token, a malformed or unknown token 401; a token without the
 * route's scope 403; one with it gets through. Every one of those calls is audited. The public port
 * serves none of the admin routes, and without a configured token there is no admin API at all.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { adminEndpoints } from '../../src/admin/routes/index.js';
import { mintAdminToken } from '../../src/admin/tokens.js';
import { buildOpsApp } from '../../src/ops/server.js';
import { bearer, buildTestGateway } from '../helpers/gateway.js';
import { buildAdminGateway, type AdminGateway } from './helpers.js';

const ROUTES = adminEndpoints({ serverUrl: 'http://127.0.0.1:9464', profile: 'A' });

t.test('admin scopes on every route', async (t) => {
  let gw: AdminGateway;
  /**
   * A concrete URL for each route: an existing account and key, an event id of the right shape. A
   * deletion names beta, which no other route uses, so that the routes after it still find acme.
   */
  let urlOf: (route: { method: string; url: string }) => string;

  t.before(async () => {
    gw = await buildAdminGateway();
    const keyId = gw.keyIds['acme:all'] as string;
    urlOf = ({ method, url }) =>
      url.replace(':event_id', 'evt_0000000000').replace(':id', url.startsWith('/admin/v1/keys/') ? keyId : method === 'DELETE' ? 'beta' : 'acme');
  });
  t.teardown(() => gw.close());

  t.test('the scheme\'s name is case-insensitive (RFC 9110): bearer and BEARER are Bearer; spaces after it may be several', async () => {
    for (const scheme of ['bearer', 'BEARER', 'Bearer  ']) {
      const response = await gw.admin('GET', '/admin/v1/accounts', { token: null, headers: { authorization: `${scheme} ${gw.tokens.all?.token}` } });
      assert.equal(response.statusCode, 200, scheme);
    }
  });

  t.test('covers every admin route', async () => {
    assert.equal(ROUTES.length, 17);
    assert.deepEqual(new Set(ROUTES.map((route) => route.scope)), new Set(['admin:accounts', 'admin:keys', 'admin:webhooks', 'admin:read', 'any']));
  });

  for (const route of ROUTES) {
    const name = `${route.method} ${route.url} (${route.scope})`;
    t.test(`${name}: no token, a malformed or an unknown token 401; audited without a token name`, async () => {
      const url = urlOf(route);
      const before = gw.adminAudit.records.length;
      const none = await gw.admin(route.method, url, { token: null });
      assert.equal(none.statusCode, 401);
      assert.equal(none.headers['www-authenticate'], 'Bearer realm="admin"');
      assert.equal(none.json().reason, 'unauthenticated');
      assert.match(String(none.headers['content-type']), /^application\/problem\+json/);
      const basic = await gw.admin(route.method, url, { token: null, headers: { authorization: `Basic ${Buffer.from('panel:x').toString('base64')}` } });
      assert.equal(basic.statusCode, 401);
      assert.equal(basic.headers['www-authenticate'], 'Bearer realm="admin"', 'another scheme: no Bearer credential, no error code (RFC 6750 §3.1)');
      const unknown = await gw.admin(route.method, url, { token: mintAdminToken('stranger', ['admin:read']).token });
      assert.equal(unknown.statusCode, 401);
      assert.equal(unknown.headers['www-authenticate'], 'Bearer realm="admin", error="invalid_token"');
      // A v1 key is not an admin token.
      assert.equal((await gw.admin(route.method, url, { token: gw.keys['acme:all'] })).statusCode, 401);

      const records = gw.adminAudit.records.slice(before);
      assert.equal(records.length, 4, 'one record per call');
      for (const record of records) {
        assert.deepEqual(
          { token: record.token, operation: record.operation, route: record.route, outcome: record.outcome, status: record.status, reason: record.reason },
          { token: null, operation: route.operationId, route: route.url, outcome: 'denied', status: 401, reason: 'unauthenticated' },
        );
      }
    });

    if (route.scope !== 'any') {
      const scope = route.scope;
      t.test(`${name}: a token with every other scope 403; one with ${scope} gets through; both audited by name`, async () => {
        const url = urlOf(route);
        const before = gw.adminAudit.records.length;
        const refused = await gw.admin(route.method, url, { token: `other:${scope}` });
        assert.equal(refused.statusCode, 403, refused.body);
        assert.equal(refused.json().reason, 'insufficient_scope');
        assert.equal(refused.json().required_scope, scope);
        assert.match(String(refused.headers['www-authenticate']), new RegExp(`error="insufficient_scope", scope="${scope}"`));
        const allowed = await gw.admin(route.method, url, { token: scope, body: {} });
        assert.ok(![401, 403].includes(allowed.statusCode), `${allowed.statusCode}: ${allowed.body}`);

        const [denied, through] = gw.adminAudit.records.slice(before);
        assert.equal(denied?.token, gw.tokens[`other:${scope}`]?.entry.name);
        assert.equal(denied?.outcome, 'denied');
        assert.equal(denied?.status, 403);
        assert.equal(through?.token, gw.tokens[scope]?.entry.name);
        assert.equal(through?.status, allowed.statusCode);
        assert.equal(gw.adminAudit.records.length, before + 2);
      });
    } else {
      t.test(`${name}: any admin token`, async () => {
        for (const token of ['admin:read', 'admin:webhooks']) assert.equal((await gw.admin(route.method, urlOf(route), { token })).statusCode, 200);
      });
    }

    t.test(`${name}: not on the public port`, async () => {
      const response = await gw.app.inject({ method: route.method, url: urlOf(route), headers: { authorization: `Bearer ${gw.tokens.all?.token}` } });
      assert.equal(response.statusCode, 404);
      assert.equal(response.json().reason, 'not_found');
    });
  }
});

t.test('admin API off', async (t) => {
  t.test('without a configured token: no admin route on the ops listener, probes as before', async () => {
    const gw = await buildTestGateway();
    const ops = buildOpsApp(gw.app);
    try {
      assert.equal(gw.app.admin, null);
      for (const route of ROUTES) {
        const response = await ops.inject({ method: route.method, url: route.url.replace(/:\w+/g, 'x'), headers: bearer(gw.keys['acme:all']) });
        assert.equal(response.statusCode, 404, route.url);
      }
      assert.equal((await ops.inject({ method: 'GET', url: '/livez' })).statusCode, 200);
      assert.deepEqual(gw.adminAudit.records, []);
    } finally {
      await ops.close();
      await gw.close();
    }
  });
});
