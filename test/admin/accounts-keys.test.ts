/**
 * The admin API's accounts and keys as a panel meets them: the shapes it answers, pagination with
 * links, changes that take effect for the v1 API, the key's own fields honoured (expiry, limits),
 * and Problem+JSON for every bad input.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer } from '../helpers/gateway.js';
import { buildAdminGateway, storesLosingAnswers, type AdminGateway } from './helpers.js';

t.test('admin accounts and keys', async (t) => {
  let gw: AdminGateway;
  t.before(async () => {
    gw = await buildAdminGateway();
  });
  t.teardown(() => gw.close());

  const problem = (response: { statusCode: number; headers: Record<string, unknown>; json(): any }, status: number, reason: string) => {
    assert.equal(response.statusCode, status);
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
    const body = response.json();
    assert.equal(body.reason, reason);
    assert.equal(body.status, status);
    assert.equal(body.instance, `urn:uuid:${body.request_id}`);
    assert.equal(response.headers['x-request-id'], body.request_id);
    return body;
  };

  t.test('lists accounts oldest first, a page at a time, with links', async () => {
    for (const n of [1, 2, 3]) {
      const created = await gw.admin('POST', '/admin/v1/accounts', { body: { id: `page-${n}`, name: `Page ${n}`, upstream_id: String(100 + n) } });
      assert.equal(created.statusCode, 201);
    }
    const first = await gw.admin('GET', '/admin/v1/accounts?per_page=2');
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers['cache-control'], 'no-store');
    assert.deepEqual(first.json().data.map((account: { id: string }) => account.id), ['acme', 'beta']);
    assert.deepEqual(first.json().meta, { page: 1, per_page: 2, total: 5, last_page: 3 });
    assert.equal(first.json().links.next, '/admin/v1/accounts?page=2&per_page=2');
    assert.match(String(first.headers.link), /<\/admin\/v1\/accounts\?page=2&per_page=2>; rel="next"/);
    const last = await gw.admin('GET', '/admin/v1/accounts?page=3&per_page=2');
    assert.deepEqual(last.json().data.map((account: { id: string }) => account.id), ['page-3']);
    assert.equal(last.json().links.next, null);
    const beyond = await gw.admin('GET', '/admin/v1/accounts?page=9&per_page=2');
    assert.deepEqual(beyond.json().data, []);
    problem(await gw.admin('GET', '/admin/v1/accounts?per_page=500'), 400, 'invalid_request');
  });

  t.test("lists an account's keys a page at a time, never a key or a hash", async () => {
    const listed = await gw.admin('GET', '/admin/v1/accounts/acme/keys?per_page=3&page=2');
    assert.equal(listed.statusCode, 200);
    const all = await gw.stores.keys.listKeys('acme');
    assert.equal(listed.json().meta.total, all.length);
    assert.deepEqual(listed.json().data.map((key: { id: string }) => key.id), all.slice(3, 6).map((key) => key.id));
    for (const key of listed.json().data) assert.deepEqual(Object.keys(key).sort(), ['account_id', 'created_at', 'expires_at', 'id', 'name', 'rate_limits', 'revoked_at', 'scopes', 'status']);
    assert.ok(!listed.body.includes('rk_'));
    const statuses = new Map((await gw.admin('GET', '/admin/v1/accounts/acme/keys?per_page=100')).json().data.map((key: { id: string; status: string }) => [key.id, key.status]));
    assert.equal(statuses.get(gw.keyIds['acme:revoked']), 'revoked');
    assert.equal(statuses.get(gw.keyIds['acme:expired']), 'expired');
    assert.equal(statuses.get(gw.keyIds['acme:all']), 'active');
    problem(await gw.admin('GET', '/admin/v1/accounts/nobody/keys'), 404, 'not_found');
  });

  t.test("a key's name, scopes, expiry and limits are honoured by the v1 API", async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const issued = await gw.admin('POST', '/admin/v1/accounts/beta/keys', {
      body: { name: 'limited', scopes: ['read:services'], expires_at: expiresAt, rate_limits: { per_minute: 1, burst: 0 } },
      headers: { 'idempotency-key': 'limited-1' },
    });
    assert.equal(issued.statusCode, 201, issued.body);
    const key = issued.json();
    assert.deepEqual(
      { name: key.name, scopes: key.scopes, expires_at: key.expires_at, rate_limits: key.rate_limits, status: key.status, account_id: key.account_id },
      { name: 'limited', scopes: ['read:services'], expires_at: expiresAt, rate_limits: { per_minute: 1, burst: 0 }, status: 'active', account_id: 'beta' },
    );
    const { key: _full, ...stored } = key;
    assert.deepEqual((await gw.admin('GET', `/admin/v1/keys/${key.id}`)).json(), stored);
    const headers = bearer(key.key);
    assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/services', headers })).statusCode, 200);
    assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/billing/balance', headers })).statusCode, 403, 'only its scope');
    assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/services', headers })).statusCode, 429, 'its own limit: one request at rest');
  });

  t.test('an account changed to another upstream customer serves that customer from the next request', async () => {
    const key = gw.keys['beta:all'] as string;
    const clientOf = async () => (await gw.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) })).json().account.email;
    assert.equal(await clientOf(), 'bruno@beta.example');
    const changed = await gw.admin('PATCH', '/admin/v1/accounts/beta', { body: { upstream_id: '3', name: 'Beta Renamed' } });
    assert.equal(changed.statusCode, 200);
    assert.deepEqual([changed.json().upstream_id, changed.json().name], ['3', 'Beta Renamed']);
    assert.equal(await clientOf(), 'greta@gamma.example');
    await gw.admin('PATCH', '/admin/v1/accounts/beta', { body: { upstream_id: '2' } });
    assert.equal(await clientOf(), 'bruno@beta.example');
    assert.equal((await gw.admin('GET', '/admin/v1/accounts/beta')).json().name, 'Beta Renamed', 'a field left out stays');
  });

  t.test('rotating or revoking: the refusals a panel can meet', async () => {
    const revoked = gw.keyIds['acme:revoked'] as string;
    const inactive = await gw.admin('POST', `/admin/v1/keys/${revoked}/rotate`, { body: {}, headers: { 'idempotency-key': 'rotate-revoked' } });
    assert.match(problem(inactive, 409, 'key_inactive').detail, new RegExp(`key ${revoked} is revoked`));
    const before = (await gw.stores.keys.getKey(revoked))?.revokedAt;
    assert.equal((await gw.admin('POST', `/admin/v1/keys/${revoked}/revoke`)).json().revoked_at, before, 'revoking again keeps its time');
    problem(await gw.admin('POST', '/admin/v1/keys/00000000000000ff/revoke'), 404, 'not_found');
    problem(await gw.admin('POST', '/admin/v1/keys/not-a-key/revoke'), 400, 'invalid_request');
    problem(await gw.admin('POST', `/admin/v1/keys/${gw.keyIds['acme:all']}/rotate`, { body: {} }), 400, 'idempotency_key_missing');
  });

  t.test('bad input answers Problem+JSON naming the fields', async () => {
    const missing = problem(await gw.admin('POST', '/admin/v1/accounts', { body: { id: 'x y', upstream_id: 7, extra: true } }), 400, 'invalid_request');
    assert.deepEqual(missing.errors.map((error: { pointer: string }) => error.pointer).sort(), ['/extra', '/id', '/name', '/upstream_id']);
    problem(await gw.admin('POST', '/admin/v1/accounts', { body: { id: 'acme', name: 'Again', upstream_id: '1' } }), 409, 'account_exists');
    problem(await gw.admin('PATCH', '/admin/v1/accounts/acme', { body: {} }), 400, 'invalid_request');
    const scopes = problem(
      await gw.admin('POST', '/admin/v1/accounts/acme/keys', { body: { name: 'k', scopes: ['admin:keys'], expires_at: 'tomorrow' }, headers: { 'idempotency-key': 'bad-1' } }),
      400,
      'invalid_request',
    );
    assert.deepEqual(scopes.errors.map((error: { pointer: string }) => error.pointer).sort(), ['/expires_at', '/scopes/0']);
    const past = problem(
      await gw.admin('POST', '/admin/v1/accounts/acme/keys', { body: { name: 'k', scopes: [], expires_at: '2020-01-01T00:00:00Z' }, headers: { 'idempotency-key': 'bad-2' } }),
      400,
      'invalid_request',
    );
    assert.deepEqual(past.errors, [{ pointer: '/expires_at', detail: 'must be in the future' }]);
    problem(await gw.admin('POST', '/admin/v1/accounts/acme/keys', { body: { name: 'k', scopes: [] }, headers: { 'idempotency-key': 'not valid!' } }), 400, 'idempotency_key_invalid');
    problem(await gw.admin('POST', '/admin/v1/accounts', { headers: { 'content-type': 'application/json' }, body: undefined }), 400, 'invalid_request');
    const notJson = await gw.ops.inject({ method: 'POST', url: '/admin/v1/accounts', headers: { authorization: `Bearer ${gw.tokens.all?.token}`, 'content-type': 'application/json' }, payload: '{"id":' });
    problem(notJson, 400, 'invalid_request');
    const text = await gw.ops.inject({ method: 'POST', url: '/admin/v1/accounts', headers: { authorization: `Bearer ${gw.tokens.all?.token}`, 'content-type': 'text/plain' }, payload: 'id=x' });
    problem(text, 415, 'unsupported_media_type');
    problem(await gw.admin('GET', '/admin/v1/accounts/nobody'), 404, 'not_found');
    problem(await gw.admin('GET', '/admin/v1/nothing-here'), 404, 'not_found');
    // Refused by the router itself (before any hook): a problem too, the path not echoed.
    const tooLong = problem(await gw.admin('GET', `/admin/v1/accounts/${'a'.repeat(101)}/keys`), 400, 'invalid_request');
    assert.doesNotMatch(JSON.stringify(tooLong), /aaaa/);
    problem(await gw.admin('GET', '/admin/v1/accounts/%E0%A4%A'), 400, 'invalid_request');
    const wrongMethod = problem(await gw.admin('PUT', '/admin/v1/accounts/acme'), 405, 'method_not_allowed');
    assert.match(wrongMethod.detail, /use DELETE, GET, HEAD, PATCH\.$/);
    // An admin read answers HEAD as GET: its status and length, no body.
    const read = await gw.admin('GET', '/admin/v1/accounts/acme');
    const head = await gw.ops.inject({ method: 'HEAD', url: '/admin/v1/accounts/acme', headers: { authorization: `Bearer ${gw.tokens.all?.token}` } });
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    assert.equal(head.headers['content-length'], String(read.rawPayload.length));
    assert.equal((await gw.ops.inject({ method: 'HEAD', url: '/admin/v1/accounts/acme' })).statusCode, 401, 'HEAD needs a token as GET does');
    const disabledIssue = await gw.admin('POST', '/admin/v1/accounts/page-1/disable');
    assert.equal(disabledIssue.statusCode, 200);
    problem(await gw.admin('POST', '/admin/v1/accounts/page-1/keys', { body: { name: 'k', scopes: [] }, headers: { 'idempotency-key': 'to-disabled' } }), 409, 'account_disabled');
  });

  t.test('names and the upstream id refuse control characters, and nothing is written', async () => {
    const pointers = (body: { errors: Array<{ pointer: string; detail: string }> }) => body.errors.map((error) => `${error.pointer} ${error.detail}`).sort();
    const created = problem(await gw.admin('POST', '/admin/v1/accounts', { body: { id: 'ctl', name: 'Acme\nfake line', upstream_id: '1\r\n2' } }), 400, 'invalid_request');
    assert.deepEqual(pointers(created), ['/name must not contain control characters', '/upstream_id must not contain control characters']);
    assert.equal(await gw.stores.keys.getAccount('ctl'), null);
    const changed = problem(await gw.admin('PATCH', '/admin/v1/accounts/acme', { body: { name: '\u001b[31mAcme' } }), 400, 'invalid_request');
    assert.deepEqual(pointers(changed), ['/name must not contain control characters']);
    assert.equal((await gw.stores.keys.getAccount('acme'))?.name, 'Acme Hosting');
    const before = (await gw.stores.keys.listKeys('acme')).length;
    const issued = problem(
      await gw.admin('POST', '/admin/v1/accounts/acme/keys', { body: { name: 'ci\u0000', scopes: [] }, headers: { 'idempotency-key': 'ctl-1' } }),
      400,
      'invalid_request',
    );
    assert.deepEqual(pointers(issued), ['/name must not contain control characters']);
    assert.equal((await gw.stores.keys.listKeys('acme')).length, before);
    // Other text is kept as it is: accents, symbols, spaces.
    assert.equal((await gw.admin('POST', '/admin/v1/accounts', { body: { id: 'uni', name: 'Müller & Söhne — Hosting', upstream_id: '5' } })).statusCode, 201);
  });

  t.test('every call above is in the admin audit log, with what it touched', async () => {
    const records = gw.adminAudit.records;
    const issued = records.find((record) => record.operation === 'issueKey' && record.status === 201);
    assert.ok(issued?.new_key_id && issued.account_id === 'beta' && issued.token === 'panel');
    const rotate = records.find((record) => record.operation === 'rotateKey' && record.reason === 'key_inactive');
    assert.equal(rotate?.key_id, gw.keyIds['acme:revoked']);
    assert.equal(rotate?.outcome, 'refused');
    const created = records.find((record) => record.operation === 'createAccount' && record.reason === 'account_exists');
    assert.equal(created?.account_id, 'acme', 'a refused call names what it was for');
    for (const record of records) assert.match(record.request_id, /^[0-9a-f-]{36}$/);
  });
});

t.test('a rotation with a grace of 0 whose answer was never recorded: the retry answers the same successor', async () => {
  const { stores, control } = storesLosingAnswers();
  const gw = await buildAdminGateway({ stores });
  try {
    const keyId = gw.keyIds['acme:all'] as string;
    const rotate = () => gw.admin('POST', `/admin/v1/keys/${keyId}/rotate`, { body: { grace_seconds: 0 }, headers: { 'idempotency-key': 'rotate-lost' } });
    control.losing = true;
    const first = await rotate();
    assert.equal(first.statusCode, 201, first.body);
    control.losing = false;
    control.advance(10 * 60_000); // past the claim's lease: the retry runs the handler again
    const retry = await rotate();
    assert.equal(retry.statusCode, 201, retry.body);
    assert.equal(retry.json().new.id, first.json().new.id, 'the same successor, not a refusal of the old key');
    const works = await gw.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(retry.json().new.key) });
    assert.equal(works.statusCode, 200, 'its secret is the one delivered');
    assert.equal((await gw.stores.keys.listKeys('acme')).filter((key) => key.id === first.json().new.id).length, 1);
  } finally {
    await gw.close();
  }
});
