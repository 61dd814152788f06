/**
 * The shared security suite, run over every registered backend (mappings/index.ts) and every route
 * the gateway serves: authentication, scopes, tenant isolation, and the headers every
 * authenticated answer carries. One gateway per backend, over its sandbox (security-gateway.ts).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { allEndpoints } from '../../src/app.js';
import type { Endpoint } from '../../src/http/endpoint.js';
import { generateApiKey } from '../../src/keys/api-key.js';
import { BACKENDS } from '../../mappings/index.js';
import { bearer, buildTestGateway, type TestGateway } from '../helpers/gateway.js';
import { overEveryBackend, type Account, type SecurityGateway } from '../helpers/security-gateway.js';

/**
 * Records in the sandbox of an upstream customer that no account here maps to (WHMCS client 3; the
 * passthrough's upstream gateway runs the WHMCS simulator and has no account for it either). The
 * FOSSBilling seed has no third client.
 */
const NOBODYS_RECORDS: Record<string, string[]> = {
  whmcs: ['/v1/orders/16', '/v1/services/17', '/v1/services/17/credentials', '/v1/billing/invoices/20/pdf'],
  v1: ['/v1/orders/16', '/v1/services/17', '/v1/services/17/credentials', '/v1/billing/invoices/20/pdf'],
};

/** The routes that are no endpoint: the documentation of each problem type (src/http/problem-pages.ts). */
const PROBLEM_PAGES = ['GET /problems/', 'GET /problems/:reason'];

let idempotencyCounter = 0;

type Target = Pick<SecurityGateway, 'path' | 'bodies'>;

function request(gw: Target, endpoint: Endpoint, account: Account, headers: Record<string, string>) {
  const url = gw.path(endpoint, account);
  const body = gw.bodies[`${endpoint.method} ${endpoint.url}`];
  return {
    method: endpoint.method as 'GET',
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

overEveryBackend(BACKENDS, 'security suite over every route', (t, gateway, backend) => {
  let gw: SecurityGateway;
  let endpoints: Endpoint[];
  t.before(() => {
    gw = gateway();
    endpoints = allEndpoints(gw.config);
  });

  t.test('covers every route the app serves', async () => {
    const served = [...gw.app.servedRoutes].sort();
    // Besides the endpoints, only the problem type pages: public, the same for every backend (test/http/problem-pages.test.ts).
    assert.deepEqual([...endpoints.map((e) => `${e.method} ${e.url}`), ...PROBLEM_PAGES].sort(), served);
  });

  t.test('public routes need no key; every other route refuses a missing key', async () => {
    for (const endpoint of endpoints) {
      const response = await gw.app.inject(request(gw, endpoint, 'acme', {}));
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
        `Bearer ${gw.keys['acme:all']} extra`,
      ]) {
        assertUnauthenticated(await gw.app.inject(request(gw, endpoint, 'acme', { authorization: header })), true);
      }
      // Another scheme sends no Bearer credential: no error code (RFC 6750 §3.1).
      for (const header of [`Basic ${Buffer.from('acme:secret').toString('base64')}`, 'Digest username="acme"', `${gw.keys['acme:all']}`]) {
        assertUnauthenticated(await gw.app.inject(request(gw, endpoint, 'acme', { authorization: header })), false);
      }
    }
  });

  t.test('each route requires exactly its scope', async () => {
    for (const endpoint of endpoints.filter((e) => e.scope !== 'public')) {
      const none = await gw.app.inject(request(gw, endpoint, 'acme', bearer(gw.keys['acme:none'])));
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
        const response = await gw.app.inject(request(gw, endpoint, 'acme', bearer(key)));
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
        const req = request(gw, endpoint, caller, bearer(gw.keys[`${caller}:all`]));
        req.url = gw.path(endpoint, owner);
        const response = await gw.app.inject(req);
        assert.equal(response.statusCode, 404, `${caller} → ${req.url}: ${response.body}`);
        assert.equal(response.json().reason, 'not_found');
        assert.doesNotMatch(response.body, /Acme|Beta|Gamma/, 'a 404 reveals nothing of the record');
      }
    }
  });

  // (Only where the sandbox has such records: tap's fail-skip makes a skipped test a failure.)
  const nobodys = NOBODYS_RECORDS[backend];
  if (nobodys) t.test('a record of an upstream customer that has no account here is 404 too', async () => {
    for (const url of nobodys) {
      const response = await gw.app.inject({ method: 'GET', url, headers: bearer(gw.keys['acme:all']) });
      assert.equal(response.statusCode, 404, url);
    }
  });

  t.test('lists hold only the caller\'s records: disjoint, each one the caller\'s own and 404 to the other', async () => {
    for (const url of ['/v1/services', '/v1/billing/invoices']) {
      const detail = (id: string) => (url === '/v1/services' ? `/v1/services/${id}` : `/v1/billing/invoices/${id}/pdf`);
      const listed: Record<Account, string[]> = { acme: [], beta: [] };
      for (const [account, other] of [['acme', 'beta'], ['beta', 'acme']] as const) {
        const response = await gw.app.inject({ method: 'GET', url: `${url}?per_page=100`, headers: bearer(gw.keys[`${account}:all`]) });
        assert.equal(response.statusCode, 200, response.body);
        const ids = (response.json().data as Array<{ id: string }>).map((record) => record.id);
        assert.ok(ids.length > 0, `${account} has ${url}`);
        assert.equal(response.json().meta.total, ids.length, `${account} ${url}: the total counts only its own`);
        listed[account] = ids;
        for (const id of ids) {
          const own = await gw.app.inject({ method: 'GET', url: detail(id), headers: bearer(gw.keys[`${account}:all`]) });
          assert.equal(own.statusCode, 200, `${account} reads its listed ${detail(id)}`);
          const theirs = await gw.app.inject({ method: 'GET', url: detail(id), headers: bearer(gw.keys[`${other}:all`]) });
          assert.equal(theirs.statusCode, 404, `${other} → ${account}'s ${detail(id)}`);
        }
      }
      assert.deepEqual(listed.acme.filter((id) => listed.beta.includes(id)), [], `${url}: no record in both lists`);
    }
  });

  t.test('every GET route answers HEAD as GET, behind the same gates, without the body (RFC 9110 §9.3.2)', async () => {
    // What differs from one request to the next: the request's id, the limits consumed, the time.
    const varying = /^(x-request-id|date|ratelimit|x-ratelimit-)/;
    const stable = (headers: Record<string, unknown>) => Object.fromEntries(Object.entries(headers).filter(([name]) => !varying.test(name)));
    const reads = endpoints.filter((e) => e.method === 'GET');
    assert.ok(reads.length >= 10);
    for (const endpoint of reads) {
      const label = `HEAD ${endpoint.url}`;
      const get = await gw.app.inject(request(gw, endpoint, 'acme', bearer(gw.keys['acme:all'])));
      const head = await gw.app.inject({ ...request(gw, endpoint, 'acme', bearer(gw.keys['acme:all'])), method: 'HEAD' });
      assert.equal(get.statusCode, 200, `GET ${endpoint.url}: ${get.body}`);
      assert.equal(head.statusCode, 200, label);
      assert.equal(head.body, '', `${label} sends no body`);
      assert.equal(head.headers['content-length'], String(get.rawPayload.length), `${label}: the length GET's body has`);
      assert.deepEqual(stable(head.headers), stable(get.headers), `${label}: GET's headers`);
      if (endpoint.scope === 'public') continue;
      const missing = await gw.app.inject({ ...request(gw, endpoint, 'acme', {}), method: 'HEAD' });
      assert.equal(missing.statusCode, 401, label);
      assert.equal(missing.headers['www-authenticate'], 'Bearer realm="v1"', label);
      assert.equal(missing.body, '', label);
      if (endpoint.scope !== 'any') {
        const unscoped = await gw.app.inject({ ...request(gw, endpoint, 'acme', bearer(gw.keys['acme:none'])), method: 'HEAD' });
        assert.equal(unscoped.statusCode, 403, label);
        assert.ok(unscoped.headers['x-ratelimit-remaining'] !== undefined, `${label}: a HEAD counts against the key's limits`);
      }
      if (endpoint.url.includes(':id') && endpoint.url !== '/v1/products/:id') {
        const other = await gw.app.inject({ method: 'HEAD', url: gw.path(endpoint, 'beta'), headers: bearer(gw.keys['acme:all']) });
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
      const response = await gw.app.inject(request(gw, endpoint, 'acme', bearer(gw.keys['acme:all'])));
      assert.equal(response.headers['cache-control'], 'no-store', endpoint.url);
      assert.match(String(response.headers['x-request-id']), /^[0-9a-f-]{36}$/);
      for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-policy', 'ratelimit']) {
        assert.ok(response.headers[header] !== undefined, `${endpoint.url} ${header}`);
      }
    }
  });
});

/**
 * The WHMCS mapping against its simulator's own records and calls (which a sandbox does not keep):
 * the lists hold exactly the caller's records, and every call WHMCS can filter carries its client id.
 */
t.test('WHMCS mapping: exactly the caller\'s records, by its client id', async (t) => {
  let gw: TestGateway;
  t.before(async () => {
    gw = await buildTestGateway();
  });
  t.teardown(() => gw.close());
  // Records of beta (WHMCS client 2) in the simulator's seed.
  const BETA_IDS: Record<string, string> = { '/v1/products/:id': '1', '/v1/orders/:id': '9', '/v1/services/:id': '10', '/v1/services/:id/credentials': '10', '/v1/services/:id/actions': '10', '/v1/billing/invoices/:id/pdf': '11' };
  const BETA_RECORDS: Target = {
    path: (endpoint) => endpoint.url.replace(':id', BETA_IDS[endpoint.url] ?? 'x'),
    bodies: {
      'POST /v1/orders': { product_id: '1', billing_cycle: 'monthly' },
      'POST /v1/services/:id/actions': { action: 'reboot' },
      'PUT /v1/webhooks': { url: 'https://hooks.example.com/reseller' },
    },
  };

  t.test('lists hold exactly the caller\'s records in the simulator', async () => {
    const state = gw.simulator.state;
    for (const [account, clientId] of [['acme', 1], ['beta', 2]] as const) {
      for (const [url, records] of [['/v1/services', state.services], ['/v1/billing/invoices', state.invoices]] as const) {
        const response = await gw.app.inject({ method: 'GET', url: `${url}?per_page=100`, headers: bearer(gw.keys[`${account}:all`]) });
        const ids = (response.json().data as Array<{ id: string }>).map((record) => Number(record.id)).sort((a, b) => a - b);
        const expected = records.filter((record) => record.clientId === clientId).map((record) => record.id).sort((a, b) => a - b);
        assert.deepEqual(ids, expected, `${account} ${url}`);
      }
    }
  });

  t.test('every upstream call carries the caller\'s client id where WHMCS can filter', async () => {
    gw.simulator.calls.length = 0;
    const endpoints = allEndpoints(gw.config);
    for (const endpoint of endpoints.filter((e) => e.scope !== 'public')) {
      await gw.app.inject(request(BETA_RECORDS, endpoint, 'beta', bearer(gw.keys['beta:all'])));
    }
    const filtered: Record<string, string> = { getclientsproducts: 'clientid', getinvoices: 'userid', getorders: 'userid', addorder: 'clientid', getclientsdetails: 'clientid' };
    for (const call of gw.simulator.calls) {
      const field = filtered[call.action];
      if (field) assert.equal(String(call.params[field]), '2', `${call.action} filtered by ${field}`);
    }
    assert.ok(gw.simulator.calls.some((c) => c.action === 'getclientsproducts'));
  });
});
