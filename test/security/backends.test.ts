/**
 * The security suite's tenant isolation and odd-id sweep, over every registered backend (WHMCS,
 * FOSSBilling, the v1 passthrough), on every route with an id that the app serves: another
 * account's record is 404 and nothing of it, in both directions, and a write on it changes
 * nothing; an id that is not one (traversal, encoded slashes, unicode digits, very long) is a 400
 * problem before any backend is asked. A route with an id added later fails here until it is
 * given a record of each account (RECORD_OF in test/helpers/security-gateway.ts).
 */
import assert from 'node:assert/strict';
import { allEndpoints } from '../../src/app.js';
import type { Endpoint } from '../../src/http/endpoint.js';
import { BACKENDS } from '../../mappings/index.js';
import { call, type HttpResponse } from '../helpers/http.js';
import { overEveryBackend, RECORD_OF, type AccountRecords, type SecurityGateway } from '../helpers/security-gateway.js';

/** Ids that are not ids, as they arrive on the wire. */
const ODD_IDS = [
  '..',
  '%2e%2e',
  '1%2F..%2F2',
  '1%2f2',
  '..%5C1',
  '%D9%A1', // ١ ARABIC-INDIC DIGIT ONE
  '%EF%BC%91', // １ FULLWIDTH DIGIT ONE
  '%E2%80%AE1', // right-to-left override
  '1%00',
  '%201',
  '01',
  '-1',
  '0',
  '1.0',
  '1e3',
  '9'.repeat(19),
  '9'.repeat(300),
  'rk_0123456789abcdef_secret',
];

const PROBLEM_FIELDS = new Set(['type', 'title', 'status', 'detail', 'instance', 'reason', 'request_id', 'errors', 'allowed_actions']);

function assertProblem(response: HttpResponse, status: number, reason: string, what: string): void {
  assert.equal(response.status, status, `${what}: ${response.text}`);
  assert.match(response.headers['content-type'] ?? '', /^application\/problem\+json/, what);
  const body = response.json();
  assert.equal(body.reason, reason, what);
  assert.ok(response.headers['x-request-id'], what);
  for (const field of Object.keys(body)) assert.ok(PROBLEM_FIELDS.has(field), `${what}: the problem carries ${field}`);
}

let counter = 0;

function send(gw: SecurityGateway, endpoint: Endpoint, id: string, key: string | undefined): Promise<HttpResponse> {
  const path = endpoint.url.replace(':id', id);
  if (endpoint.method === 'GET') return call(gw.base, 'GET', path, { key });
  return call(gw.base, endpoint.method, path, { key, body: { action: 'cancel' }, headers: { 'idempotency-key': `sec-backends-${process.pid}-${++counter}` } });
}

overEveryBackend(BACKENDS, 'tenant isolation and odd ids on every route with an id', (t, gateway, backend) => {
  let gw: SecurityGateway;
  let endpoints: Endpoint[];
  t.before(() => {
    gw = gateway();
    endpoints = allEndpoints(gw.config).filter((endpoint) => endpoint.url.includes(':id') && endpoint.url !== '/v1/products/:id');
  });

  t.test('every route with an id has a record of each account here', async () => {
    for (const endpoint of endpoints) assert.ok(RECORD_OF[endpoint.url], `no record for ${endpoint.method} ${endpoint.url}`);
  });

  t.test("another account's record: 404 with nothing of it, in both directions; the owner's record is unchanged", async () => {
    for (const [caller, owner] of [['acme', 'beta'], ['beta', 'acme']] as const) {
      const ownerKey = gw.keys[`${owner}:all`];
      const ownerService = `/v1/services/${gw.records[owner].service.id}`;
      const before = (await call(gw.base, 'GET', ownerService, { key: ownerKey })).json();
      for (const endpoint of endpoints) {
        const id = (RECORD_OF[endpoint.url] as (records: AccountRecords) => string)(gw.records[owner]);
        const what = `${backend}: ${caller} → ${endpoint.method} ${endpoint.url.replace(':id', id)}`;
        // The record is there: its owner reads it.
        if (endpoint.method === 'GET') assert.equal((await send(gw, endpoint, id, ownerKey)).status, 200, `${what}, read by its owner`);
        const response = await send(gw, endpoint, id, gw.keys[`${caller}:all`]);
        assertProblem(response, 404, 'not_found', what);
      }
      assert.deepEqual((await call(gw.base, 'GET', ownerService, { key: ownerKey })).json(), before, `${owner}'s service after ${caller}'s calls`);
    }
  });

  t.test('HEAD on every GET route: the status and headers GET has, no body; another account\'s record 404', async () => {
    // (undici closes a connection after a HEAD, and asks the server to: Connection differs too.)
    const varying = /^(date|x-request-id|ratelimit|x-ratelimit-|keep-alive|connection)/;
    const stable = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).filter(([name]) => !varying.test(name)));
    const key = gw.keys['acme:all'];
    for (const endpoint of allEndpoints(gw.config).filter((e) => e.method === 'GET' && e.url !== '/v1/products/:id')) {
      const record = RECORD_OF[endpoint.url];
      const path = endpoint.url.replace(':id', record ? record(gw.records.acme) : '');
      const what = `${backend}: HEAD ${path}`;
      const get = await call(gw.base, 'GET', path, { key });
      const head = await call(gw.base, 'HEAD', path, { key });
      assert.equal(get.status, 200, `GET ${path}: ${get.text}`);
      assert.equal(head.status, 200, what);
      assert.equal(head.bytes.length, 0, what);
      assert.equal(head.headers['content-length'], String(get.bytes.length), what);
      assert.deepEqual(stable(head.headers), stable(get.headers), what);
      if (record) assert.equal((await call(gw.base, 'HEAD', endpoint.url.replace(':id', record(gw.records.beta)), { key })).status, 404, `${what} of beta's record`);
    }
  });

  t.test('an id that is not one: 400 invalid_request on every route, never 5xx, never a record', async () => {
    for (const endpoint of endpoints) {
      for (const id of ODD_IDS) {
        const callsBefore = await gw.upstreamCalls();
        const response = await send(gw, endpoint, id, gw.keys['acme:all']);
        const what = `${backend}: ${endpoint.method} ${endpoint.url.replace(':id', id.slice(0, 40))}`;
        assert.ok(response.status === 400 || response.status === 404, `${what}: ${response.status} ${response.text}`);
        assertProblem(response, response.status, response.status === 400 ? 'invalid_request' : 'not_found', what);
        if (response.status === 400) assert.equal(await gw.upstreamCalls(), callsBefore, `${what}: refused before the upstream was called`);
      }
    }
  });
});
