/**
 * The shared security suite, run over every route the gateway serves: authentication, scopes,
 * tenant isolation, and the headers every authenticated answer carries.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { allEndpoints } from '../../src/app.js';
import type { Endpoint } from '../../src/http/endpoint.js';
import { generateApiKey } from '../../src/keys/api-key.js';
import { bearer, buildTestGateway, type TestGateway } from '../helpers/gateway.js';

/** A record of each account, per route: acme (WHMCS client 1) and beta (client 2). */
const OWN_IDS: Record<string, { acme: string; beta: string }> = {
  '/v1/products/:id': { acme: '1', beta: '1' },
  '/v1/orders/:id': { acme: '1', beta: '9' },
  '/v1/services/:id': { acme: '1', beta: '10' },
  '/v1/services/:id/credentials': { acme: '1', beta: '10' },
  '/v1/services/:id/actions': { acme: '1', beta: '10' },
  '/v1/billing/invoices/:id/pdf': { acme: '1', beta: '11' },
};

const BODIES: Record<string, unknown> = {
  'POST /v1/orders': { product_id: '1', billing_cycle: 'monthly' },
  'POST /v1/services/:id/actions': { action: 'reboot' },
  'PUT /v1/webhooks': { url: 'https://hooks.example.com/reseller' },
};

let idempotencyCounter = 0;

function request(endpoint: Endpoint, account: 'acme' | 'beta', headers: Record<string, string>) {
  const ids = OWN_IDS[endpoint.url];
  const url = endpoint.url.replace(':id', ids ? ids[account] : 'x');
  const body = BODIES[`${endpoint.method} ${endpoint.url}`];
  return {
    method: endpoint.method,
    url,
    headers: {
      ...headers,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(endpoint.idempotent ? { 'idempotency-key': `sec-${++idempotencyCounter}` } : {}),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  };
}

function assertUnauthenticated(response: LightMyRequestResponse, keySent: boolean): void {
  assert.equal(response.statusCode, 401, response.body);
  assert.equal(response.json().reason, 'unauthenticated');
  assert.equal(
    response.headers['www-authenticate'],
    keySent ? 'Bearer realm="v1", error="invalid_token"' : 'Bearer realm="v1"',
  );
  assert.ok(response.headers['x-request-id']);
}

t.test('security suite over every route', async (t) => {
  let gw: TestGateway;
  let endpoints: Endpoint[];
  t.before(async () => {
    gw = await buildTestGateway();
    endpoints = allEndpoints(gw.config);
  });
  t.teardown(() => gw.close());

  t.test('covers every route the app serves', async () => {
    const served = [...gw.app.servedRoutes].sort();
    assert.deepEqual(endpoints.map((e) => `${e.method} ${e.url}`).sort(), served);
  });

  t.test('public routes need no key; every other route refuses a missing key', async () => {
    for (const endpoint of endpoints) {
      const response = await gw.app.inject(request(endpoint, 'acme', {}));
      if (endpoint.scope === 'public') assert.equal(response.statusCode, 200, `${endpoint.url}: ${response.body}`);
      else assertUnauthenticated(response, false);
    }
  });

  t.test('takes the scheme\'s name in any case (RFC 9110): bearer and BEARER are Bearer', async () => {
    for (const scheme of ['bearer', 'BEARER']) {
      const response = await gw.app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `${scheme} ${gw.keys['acme:all']}` } });
      assert.equal(response.statusCode, 200, scheme);
    }
  });

  t.test('refuses malformed, unknown, revoked and expired keys, and other schemes', async () => {
    const unknown = generateApiKey().key;
    const revoked = gw.keys['acme:revoked'] as string;
    const expired = gw.keys['acme:expired'] as string;
    const wrongSecret = `${(gw.keys['acme:all'] as string).slice(0, 20)}${'A'.repeat(43)}`;
    for (const endpoint of endpoints.filter((e) => e.scope !== 'public')) {
      for (const header of [
        'Bearer not-a-key',
        `Bearer ${unknown}`,
        `Bearer ${revoked}`,
        `Bearer ${expired}`,
        `Bearer ${wrongSecret}`,
        `Basic ${Buffer.from('acme:secret').toString('base64')}`,
        `Bearer ${gw.keys['acme:all']} extra`,
      ]) {
        assertUnauthenticated(await gw.app.inject(request(endpoint, 'acme', { authorization: header })), true);
      }
    }
  });

  t.test('each route requires exactly its scope', async () => {
    for (const endpoint of endpoints.filter((e) => e.scope !== 'public')) {
      const none = await gw.app.inject(request(endpoint, 'acme', bearer(gw.keys['acme:none'])));
      if (endpoint.scope === 'any') {
        assert.equal(none.statusCode, 200, `${endpoint.url} accepts any valid key`);
        continue;
      }
      assert.equal(none.statusCode, 403, `${endpoint.method} ${endpoint.url} without scope: ${none.body}`);
      assert.equal(none.json().reason, 'insufficient_scope');
      assert.equal(none.json().required_scope, endpoint.scope);
      assert.ok(none.headers['x-ratelimit-remaining'] !== undefined && none.headers['ratelimit'] !== undefined, `${endpoint.url}: a 403 carries the limits`);
      for (const [label, key] of Object.entries(gw.keys)) {
        const match = /^acme:(\w+:\w+)$/.exec(label);
        if (!match) continue;
        const response = await gw.app.inject(request(endpoint, 'acme', bearer(key)));
        if (match[1] === endpoint.scope) {
          assert.ok(![401, 403].includes(response.statusCode), `${endpoint.url} with ${label}: ${response.body}`);
        } else {
          assert.equal(response.statusCode, 403, `${endpoint.method} ${endpoint.url} with ${label}`);
        }
      }
    }
  });

  t.test('another account\'s record is 404 on every route with an id, in both directions', async () => {
    for (const endpoint of endpoints.filter((e) => e.url.includes(':id') && e.url !== '/v1/products/:id')) {
      for (const [caller, owner] of [['acme', 'beta'], ['beta', 'acme']] as const) {
        const ids = OWN_IDS[endpoint.url] as { acme: string; beta: string };
        const req = request(endpoint, caller, bearer(gw.keys[`${caller}:all`]));
        req.url = endpoint.url.replace(':id', ids[owner]);
        const response = await gw.app.inject(req);
        assert.equal(response.statusCode, 404, `${caller} → ${req.url}: ${response.body}`);
        assert.equal(response.json().reason, 'not_found');
        assert.doesNotMatch(response.body, /Acme|Beta|Gamma/, 'a 404 reveals nothing of the record');
      }
    }
  });

  t.test('a record of an account that has no key here (client 3) is 404 too', async () => {
    for (const url of ['/v1/orders/16', '/v1/services/17', '/v1/services/17/credentials', '/v1/billing/invoices/20/pdf']) {
      const response = await gw.app.inject({ method: 'GET', url, headers: bearer(gw.keys['acme:all']) });
      assert.equal(response.statusCode, 404, url);
    }
  });

  t.test('lists hold only the caller\'s records', async () => {
    const state = gw.simulator.state;
    for (const [account, clientId] of [['acme', 1], ['beta', 2]] as const) {
      const services = await gw.app.inject({ method: 'GET', url: '/v1/services?per_page=100', headers: bearer(gw.keys[`${account}:all`]) });
      const serviceIds = (services.json().data as Array<{ id: string }>).map((s) => Number(s.id)).sort((a, b) => a - b);
      const expected = state.services.filter((s) => s.clientId === clientId).map((s) => s.id).sort((a, b) => a - b);
      assert.deepEqual(serviceIds, expected, `${account} services`);
      const invoices = await gw.app.inject({ method: 'GET', url: '/v1/billing/invoices?per_page=100', headers: bearer(gw.keys[`${account}:all`]) });
      const invoiceIds = (invoices.json().data as Array<{ id: string }>).map((i) => Number(i.id)).sort((a, b) => a - b);
      const expectedInvoices = state.invoices.filter((i) => i.clientId === clientId).map((i) => i.id).sort((a, b) => a - b);
      assert.deepEqual(invoiceIds, expectedInvoices, `${account} invoices`);
    }
  });

  t.test('every upstream call carries the caller\'s client id where WHMCS can filter', async () => {
    gw.simulator.calls.length = 0;
    for (const endpoint of endpoints.filter((e) => e.scope !== 'public')) {
      await gw.app.inject(request(endpoint, 'beta', bearer(gw.keys['beta:all'])));
    }
    const filtered: Record<string, string> = { getclientsproducts: 'clientid', getinvoices: 'userid', getorders: 'userid', addorder: 'clientid', getclientsdetails: 'clientid' };
    for (const call of gw.simulator.calls) {
      const field = filtered[call.action];
      if (field) assert.equal(String(call.params[field]), '2', `${call.action} filtered by ${field}`);
    }
    assert.ok(gw.simulator.calls.some((c) => c.action === 'getclientsproducts'));
  });

  t.test('every GET route answers HEAD as GET, behind the same gates, without the body (RFC 9110 §9.3.2)', async () => {
    // What differs from one request to the next: the request's id, the limits consumed, the time.
    const varying = /^(x-request-id|date|ratelimit|x-ratelimit-)/;
    const stable = (headers: Record<string, unknown>) => Object.fromEntries(Object.entries(headers).filter(([name]) => !varying.test(name)));
    const reads = endpoints.filter((e) => e.method === 'GET');
    assert.ok(reads.length >= 10);
    for (const endpoint of reads) {
      const label = `HEAD ${endpoint.url}`;
      const get = await gw.app.inject(request(endpoint, 'acme', bearer(gw.keys['acme:all'])));
      const head = await gw.app.inject({ ...request(endpoint, 'acme', bearer(gw.keys['acme:all'])), method: 'HEAD' });
      assert.equal(get.statusCode, 200, `GET ${endpoint.url}: ${get.body}`);
      assert.equal(head.statusCode, 200, label);
      assert.equal(head.body, '', `${label} sends no body`);
      assert.equal(head.headers['content-length'], String(get.rawPayload.length), `${label}: the length GET's body has`);
      assert.deepEqual(stable(head.headers), stable(get.headers), `${label}: GET's headers`);
      if (endpoint.scope === 'public') continue;
      const missing = await gw.app.inject({ ...request(endpoint, 'acme', {}), method: 'HEAD' });
      assert.equal(missing.statusCode, 401, label);
      assert.equal(missing.headers['www-authenticate'], 'Bearer realm="v1"', label);
      assert.equal(missing.body, '', label);
      if (endpoint.scope !== 'any') {
        const unscoped = await gw.app.inject({ ...request(endpoint, 'acme', bearer(gw.keys['acme:none'])), method: 'HEAD' });
        assert.equal(unscoped.statusCode, 403, label);
        assert.ok(unscoped.headers['x-ratelimit-remaining'] !== undefined, `${label}: a HEAD counts against the key's limits`);
      }
      const ids = OWN_IDS[endpoint.url];
      if (ids && endpoint.url !== '/v1/products/:id') {
        const other = await gw.app.inject({ method: 'HEAD', url: endpoint.url.replace(':id', ids.beta), headers: bearer(gw.keys['acme:all']) });
        assert.equal(other.statusCode, 404, `${label} of beta's record`);
      }
    }
    // Allow names HEAD wherever GET is, and nowhere else.
    const products = await gw.app.inject({ method: 'DELETE', url: '/v1/products', headers: bearer(gw.keys['acme:all']) });
    assert.equal(products.statusCode, 405);
    assert.equal(products.headers.allow, 'GET, HEAD');
    const orders = await gw.app.inject({ method: 'DELETE', url: '/v1/orders', headers: bearer(gw.keys['acme:all']) });
    assert.equal(orders.headers.allow, 'POST');
  });

  t.test('authenticated answers carry no-store, the request id and rate-limit headers', async () => {
    for (const endpoint of endpoints.filter((e) => e.scope !== 'public')) {
      const response = await gw.app.inject(request(endpoint, 'acme', bearer(gw.keys['acme:all'])));
      assert.equal(response.headers['cache-control'], 'no-store', endpoint.url);
      assert.match(String(response.headers['x-request-id']), /^[0-9a-f-]{36}$/);
      for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-policy', 'ratelimit']) {
        assert.ok(response.headers[header] !== undefined, `${endpoint.url} ${header}`);
      }
    }
  });
});
