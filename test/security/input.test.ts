/**
 * The security suite's input sweep, over every registered backend (mappings/index.ts), every route
 * that takes a body (v1 and admin) and every v1 route for headers: malformed JSON, a body that is
 * not JSON, a body over the limit and poisoned property names are refused with their Problem+JSON
 * before anything happens. Nothing of a refused request stays behind: no upstream call, no stored
 * record, and its Idempotency-Key is still free for the corrected request. Headers over Node's
 * limit are a problem too, on every route. One gateway per backend (security-gateway.ts).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { adminEndpoints } from '../../src/admin/routes/index.js';
import { allEndpoints } from '../../src/app.js';
import type { Endpoint } from '../../src/http/endpoint.js';
import { BACKENDS } from '../../mappings/index.js';
import { bearer } from '../helpers/gateway.js';
import { overEveryBackend, type SecurityGateway } from '../helpers/security-gateway.js';

/** What is sent instead of the valid body, and the problem it earns. */
const BAD_BODIES: Array<{ name: string; contentType: string | undefined; payload: (valid: unknown) => string | Buffer; status: number; reason: string }> = [
  { name: 'malformed JSON', contentType: 'application/json', payload: (valid) => JSON.stringify(valid).slice(0, -1), status: 400, reason: 'invalid_request' },
  { name: 'an empty JSON body', contentType: 'application/json', payload: () => '', status: 400, reason: 'invalid_request' },
  { name: 'JSON null', contentType: 'application/json', payload: () => 'null', status: 400, reason: 'invalid_request' },
  { name: 'a JSON array', contentType: 'application/json', payload: (valid) => JSON.stringify([valid]), status: 400, reason: 'invalid_request' },
  { name: 'a __proto__ key', contentType: 'application/json', payload: (valid) => JSON.stringify(valid).replace('{', '{"__proto__":{"admin":true},'), status: 400, reason: 'invalid_request' },
  { name: 'constructor.prototype', contentType: 'application/json', payload: (valid) => JSON.stringify(valid).replace('{', '{"constructor":{"prototype":{"admin":true}},'), status: 400, reason: 'invalid_request' },
  { name: 'an unknown field', contentType: 'application/json', payload: (valid) => JSON.stringify({ ...(valid as object), account_id: 'beta' }), status: 400, reason: 'invalid_request' },
  { name: 'text/plain', contentType: 'text/plain', payload: (valid) => JSON.stringify(valid), status: 415, reason: 'unsupported_media_type' },
  { name: 'a form', contentType: 'application/x-www-form-urlencoded', payload: () => 'action=reboot', status: 415, reason: 'unsupported_media_type' },
  { name: 'multipart', contentType: 'multipart/form-data; boundary=x', payload: () => '--x\r\n\r\n--x--', status: 415, reason: 'unsupported_media_type' },
  { name: 'application/json-patch+json', contentType: 'application/json-patch+json', payload: (valid) => JSON.stringify(valid), status: 415, reason: 'unsupported_media_type' },
  { name: 'JSON in UTF-16, declared', contentType: 'application/json; charset=utf-16', payload: (valid) => Buffer.from(JSON.stringify(valid), 'utf16le'), status: 415, reason: 'unsupported_media_type' },
  { name: 'JSON declared ISO-8859-1', contentType: 'application/json; charset="ISO-8859-1"', payload: (valid) => JSON.stringify(valid), status: 415, reason: 'unsupported_media_type' },
  { name: 'non-ASCII bytes declared US-ASCII', contentType: 'application/json; charset=us-ascii', payload: (valid) => Buffer.from(JSON.stringify(valid).replace('"', '"\u00fc'), 'latin1'), status: 415, reason: 'unsupported_media_type' },
  { name: 'Latin-1 bytes, undeclared', contentType: 'application/json', payload: (valid) => Buffer.from(JSON.stringify(valid).replace('"', '"\u00fc'), 'latin1'), status: 400, reason: 'invalid_request' },
  { name: 'a body over 64 KiB', contentType: 'application/json', payload: (valid) => JSON.stringify({ ...(valid as object), pad: 'x'.repeat(70_000) }), status: 413, reason: 'payload_too_large' },
];

function assertProblem(response: LightMyRequestResponse, status: number, reason: string, what: string): void {
  assert.equal(response.statusCode, status, `${what}: ${response.body}`);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/, what);
  assert.equal(response.json().reason, reason, what);
  assert.ok(response.headers['x-request-id'], what);
}

overEveryBackend(BACKENDS, 'security suite: bodies and headers', (t, gateway) => {
  let gw: SecurityGateway;
  t.before(() => {
    gw = gateway();
  });

  t.test('every v1 route with a body refuses what is not its JSON, and nothing of it stays', async () => {
    const withBody = allEndpoints(gw.config).filter((endpoint: Endpoint) => endpoint.body !== undefined);
    assert.deepEqual(withBody.map((endpoint) => `${endpoint.method} ${endpoint.url}`).sort(), Object.keys(gw.bodies).sort());
    for (const endpoint of withBody) {
      const name = `${endpoint.method} ${endpoint.url}`;
      const valid = gw.bodies[name];
      const url = gw.path(endpoint, 'acme');
      const idempotencyKey = `input-sweep-${endpoint.operationId}`;
      const headers = { ...bearer(gw.keys['acme:all']), ...(endpoint.idempotent ? { 'idempotency-key': idempotencyKey } : {}) };
      const callsBefore = await gw.upstreamCalls();
      const webhookBefore = await gw.stores.webhooks.get('acme');
      for (const bad of BAD_BODIES) {
        const response = await gw.app.inject({
          method: endpoint.method as 'POST',
          url,
          headers: { ...headers, ...(bad.contentType === undefined ? {} : { 'content-type': bad.contentType }) },
          payload: bad.payload(valid),
        });
        assertProblem(response, bad.status, bad.reason, `${name} with ${bad.name}`);
      }
      assert.equal(await gw.upstreamCalls(), callsBefore, `${name}: the upstream was not called`);
      assert.deepEqual(await gw.stores.webhooks.get('acme'), webhookBefore, `${name}: the webhook is unchanged`);
      // The key was not used up by the refusals: the corrected request runs under it, not a replay.
      const good = await gw.app.inject({ method: endpoint.method as 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(valid) });
      assert.ok(good.statusCode >= 200 && good.statusCode < 300, `${name} with its valid body: ${good.body}`);
      assert.equal(good.headers['idempotent-replayed'], undefined, `${name}: the corrected request is not a replay`);
      // The count above can see a call: the corrected request made one.
      if (endpoint.idempotent) assert.ok((await gw.upstreamCalls()) > callsBefore, `${name}: an upstream call was seen`);
    }
  });

  t.test('every admin route with a body refuses what is not its JSON, and nothing of it stays', async () => {
    const ADMIN_BODIES: Record<string, unknown> = {
      'POST /admin/v1/accounts': { id: 'input-sweep', name: 'Input sweep', upstream_id: '3' },
      'PATCH /admin/v1/accounts/:id': { name: 'Renamed by the sweep' },
      'POST /admin/v1/accounts/:id/keys': { name: 'sweep', scopes: ['read:services'] },
      'POST /admin/v1/keys/:id/rotate': { grace_seconds: 0 },
    };
    const withBody = adminEndpoints({ serverUrl: 'http://127.0.0.1:9090', profile: 'A' }).filter((endpoint) => endpoint.body !== undefined);
    assert.deepEqual(withBody.map((endpoint) => `${endpoint.method} ${endpoint.url}`).sort(), Object.keys(ADMIN_BODIES).sort());
    const accountsBefore = await gw.stores.keys.listAccounts();
    const keysBefore = await gw.stores.keys.listKeys();
    for (const endpoint of withBody) {
      const name = `${endpoint.method} ${endpoint.url}`;
      const url = endpoint.url.replace(':id', endpoint.url.startsWith('/admin/v1/keys/') ? (gw.keyIds['acme:read-only'] as string) : 'acme');
      for (const bad of BAD_BODIES) {
        const response = await gw.ops.inject({
          method: endpoint.method as 'POST',
          url,
          headers: {
            authorization: `Bearer ${gw.tokens.all?.token}`,
            'idempotency-key': `admin-input-sweep-${endpoint.operationId}`,
            ...(bad.contentType === undefined ? {} : { 'content-type': bad.contentType }),
          },
          payload: bad.payload(ADMIN_BODIES[name]),
        });
        assertProblem(response, bad.status, bad.reason, `${name} with ${bad.name}`);
      }
    }
    assert.deepEqual(await gw.stores.keys.listAccounts(), accountsBefore, 'no account was created or changed');
    assert.deepEqual(await gw.stores.keys.listKeys(), keysBefore, 'no key was issued, rotated or revoked');
  });

  t.test('a body is read as UTF-8: Latin-1 bytes are refused, not stored with U+FFFD; UTF-8 declared in any spelling is read', async () => {
    const account = { id: 'utf8-check', name: 'M\u00fcller GmbH', upstream_id: '3' };
    const create = (contentType: string, payload: Buffer, idempotencyKey: string) =>
      gw.ops.inject({
        method: 'POST',
        url: '/admin/v1/accounts',
        headers: { authorization: `Bearer ${gw.tokens.all?.token}`, 'idempotency-key': idempotencyKey, 'content-type': contentType },
        payload,
      });
    const latin1 = await create('application/json', Buffer.from(JSON.stringify(account), 'latin1'), 'utf8-check-1');
    assertProblem(latin1, 400, 'invalid_request', 'Latin-1 bytes');
    assert.match(latin1.json().detail, /not valid UTF-8/);
    assert.equal(await gw.stores.keys.getAccount(account.id), null, 'nothing was created');
    const utf8 = await create('application/json; charset="UTF-8"', Buffer.from(JSON.stringify(account), 'utf8'), 'utf8-check-2');
    assert.equal(utf8.statusCode, 201, utf8.body);
    assert.equal((await gw.stores.keys.getAccount(account.id))?.name, 'M\u00fcller GmbH');
    const ascii = await gw.app.inject({
      method: 'PUT',
      url: '/v1/webhooks',
      headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json;charset=US-ASCII' },
      payload: JSON.stringify({ url: 'https://hooks.example.com/ascii' }),
    });
    assert.equal(ascii.statusCode, 200, ascii.body);
  });

  t.test('headers over the limit: a 431 problem with a request id on every v1 route', async () => {
    const port = Number(new URL(gw.base).port);
    for (const endpoint of allEndpoints(gw.config)) {
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.write(`${endpoint.method} ${gw.path(endpoint, 'acme')} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.keys['acme:all']}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
        });
        let data = '';
        socket.on('data', (chunk) => (data += String(chunk)));
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
      assert.match(raw, /^HTTP\/1\.1 431 /, `${endpoint.method} ${endpoint.url}`);
      assert.match(raw, /content-type: application\/problem\+json/i);
      assert.match(raw, /x-request-id: [0-9a-f-]{36}/i);
      assert.equal(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).reason, 'headers_too_large');
    }
  });

  t.test('a key in a header other than Authorization is no key, on every route', async () => {
    const key = gw.keys['acme:all'] as string;
    for (const endpoint of allEndpoints(gw.config).filter((each) => each.scope !== 'public')) {
      for (const headers of [{ 'x-api-key': key }, { cookie: `api_key=${key}` }, { 'proxy-authorization': `Bearer ${key}` }, { authorization: key }, { authorization: `Token ${key}` }]) {
        const response = await gw.app.inject({ method: endpoint.method as 'GET', url: gw.path(endpoint, 'acme'), headers });
        assert.equal(response.statusCode, 401, `${endpoint.method} ${endpoint.url} with ${Object.keys(headers)[0]}`);
        assert.equal(response.json().reason, 'unauthenticated');
      }
    }
  });
});
