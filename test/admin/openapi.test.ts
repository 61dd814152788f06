/**
 * The admin API's own OpenAPI document: served at /admin/v1/openapi.json to any admin token, valid
 * OpenAPI 3.1, one operation per admin endpoint with its scope, every problem reason it can answer
 * in its Problem schema. The v1 document names no admin path and no admin reason.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { adminEndpoints, adminOpenApiDocument } from '../../src/admin/routes/index.js';
import { ADMIN_REASONS } from '../../src/errors.js';
import { buildAdminGateway, type AdminGateway } from './helpers.js';

type Operation = { 'x-required-scope': string; parameters: Array<{ name: string; in: string }>; responses: Record<string, unknown> };
type Document = { openapi: string; paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, { properties?: { reason?: { enum: string[] } } }> } };

t.test('admin OpenAPI document', async (t) => {
  let gw: AdminGateway;
  let doc: Document;
  t.before(async () => {
    gw = await buildAdminGateway();
    const response = await gw.admin('GET', '/admin/v1/openapi.json', { token: 'admin:webhooks' });
    assert.equal(response.statusCode, 200);
    doc = response.json() as Document;
  });
  t.teardown(() => gw.close());

  t.test('is valid OpenAPI 3.1, the one the scripts lint', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const result = await new Validator().validate(doc as never);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.deepEqual(doc, JSON.parse(JSON.stringify(adminOpenApiDocument({ serverUrl: 'http://127.0.0.1:9464', profile: 'A' }))));
  });

  t.test('has one operation per admin endpoint, with its scope and, where it makes keys, the Idempotency-Key', async () => {
    const endpoints = adminEndpoints({ serverUrl: 'http://127.0.0.1:9464', profile: 'A' });
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })));
    assert.equal(operations.length, endpoints.length);
    for (const endpoint of endpoints) {
      const found = operations.find(({ key }) => key === `${endpoint.method} ${endpoint.url.replace(/:(\w+)/g, '{$1}')}`);
      assert.ok(found, endpoint.url);
      assert.equal(found.op['x-required-scope'], endpoint.scope);
      assert.equal(found.op.parameters.some((p) => p.name === 'Idempotency-Key'), endpoint.idempotent === true, endpoint.operationId);
      for (const status of ['401', '429']) assert.ok(status in found.op.responses, `${endpoint.operationId} documents ${status}`);
    }
  });

  t.test('names the admin reasons; the v1 document names none of them, nor an admin path', async () => {
    const reasons = doc.components.schemas.AdminProblem?.properties?.reason?.enum ?? [];
    for (const reason of Object.keys(ADMIN_REASONS)) assert.ok(reasons.includes(reason), reason);
    const v1 = (await gw.app.inject({ method: 'GET', url: '/v1/openapi.json' })).body;
    for (const reason of Object.keys(ADMIN_REASONS)) assert.ok(!v1.includes(reason), reason);
    assert.ok(!v1.includes('/admin/'));
  });

  t.test('documents the headers its answers carry: Cache-Control on all, Location on a created account', async () => {
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        for (const [status, response] of Object.entries(op.responses as Record<string, { headers?: Record<string, unknown> }>)) {
          assert.ok(response.headers?.['Cache-Control'] && response.headers['X-Request-Id'], `${method} ${path} ${status}`);
        }
      }
    }
    const created = await gw.admin('POST', '/admin/v1/accounts', { token: 'all', body: { id: 'openapi-check', name: 'Check', upstream_id: '31' } });
    assert.equal(created.statusCode, 201, created.body);
    const documented = Object.keys((doc.paths['/admin/v1/accounts']?.post?.responses['201'] as { headers: object }).headers).map((name) => name.toLowerCase());
    const transport = ['connection', 'content-length', 'content-type', 'date', 'keep-alive'];
    for (const name of Object.keys(created.headers)) if (!transport.includes(name)) assert.ok(documented.includes(name), `${name} is documented`);
  });
});

t.test('admin OpenAPI document: profile B has no 410, its idempotency records never go stale', async () => {
  const has410 = (profile: 'A' | 'B') => JSON.stringify(adminOpenApiDocument({ serverUrl: 'http://127.0.0.1:9464', profile })).includes('"410"');
  assert.equal(has410('A'), true);
  assert.equal(has410('B'), false);
});

t.test('admin OpenAPI document: the server URL is the ops listener, written as a URL (IPv6 in brackets, a wildcard as loopback)', async (t) => {
  for (const [host, url] of [['::1', 'http://[::1]:9470'], ['0.0.0.0', 'http://127.0.0.1:9470']] as const) {
    const gw = await buildAdminGateway({ config: { ops: { host, port: 9470 } } });
    t.teardown(() => gw.close());
    const served = (await gw.admin('GET', '/admin/v1/openapi.json', { token: 'admin:webhooks' })).json() as { servers: Array<{ url: string }> };
    assert.equal(served.servers[0]?.url, url, host);
  }
});
