/**
 * An integrator's sweep: a client built from the served OpenAPI document alone. For each sandbox
 * backend (WHMCS profile A, FOSSBilling profile A, WHMCS profile B) it reads GET /v1/openapi.json,
 * compiles every schema the document gives with a strict JSON Schema validator (Ajv, draft
 * 2020-12, formats checked, objects without `additionalProperties` treated as closed), then provokes
 * every operation's success and every error status it can (400 401 403 404 405 409 410 413 415 422
 * 429 503) and checks each answer against the document: the status is listed for the operation,
 * the media type is the listed one, the body is the listed schema, every header the document marks
 * required is there, every documented header that is there has the documented type and format, and
 * the problem's reason is one the listed status names. It also checks that every example in the
 * document is valid against its own schema, that the request schemas take what the server takes
 * and refuse what it refuses, and that the document is usable by code generators (unique
 * operationIds, every $ref resolves, no untyped schema, no ambiguous union of objects).
 *
 * test/openapi/document.test.ts checks the document's own shape (profiles, scopes, examples
 * exist); test/helpers/contract-client.ts checks answers against the zod schemas. This file checks
 * answers against the served JSON document, as a generated client would (the client itself:
 * test/helpers/openapi-client.ts; the admin API's sweep: test/admin/admin-client.test.ts).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { KeyService } from '../../src/keys/key-service.js';
import { PROFILE_ACTIONS } from '../../src/v1/schemas.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { buildBackendGateway, type BackendGateway } from '../helpers/backend-gateway.js';
import { buildTestGateway, TEST_PEPPER } from '../helpers/gateway.js';
import { DocumentClient, examples, generatorProblems, parameterSchema, requestSchema, sender, verdict, type Json, type Send } from '../helpers/openapi-client.js';

/**
 * The headers the contract promises on an answer must be marked required, or a generated client
 * types them optional: X-Request-Id on every answer (spec §1), Retry-After on 429 (spec §7),
 * WWW-Authenticate on 401 and 403, Location on 201 (contract §6), Content-Disposition on the PDF,
 * Link on a page.
 */
function unmarkedPromises(doc: Json): string[] {
  const problems: string[] = [];
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      for (const [status, response] of Object.entries(op.responses as Json)) {
        const promised = ['X-Request-Id'];
        if (status === '429') promised.push('Retry-After');
        if (status === '401' || status === '403') promised.push('WWW-Authenticate');
        if (status === '201') promised.push('Location');
        if (response.content?.['application/pdf']) promised.push('Content-Disposition');
        if (response.content?.['application/json']?.schema?.$ref?.endsWith('Page')) promised.push('Link');
        for (const name of promised) if (response.headers?.[name]?.required !== true) problems.push(`${method} ${path} ${status}: header ${name} is not marked required`);
      }
    }
  }
  return problems;
}

// ---- the sweep --------------------------------------------------------------------------------

let counter = 0;
const fresh = (label: string) => `review-${label}-${process.pid}-${++counter}`;

/** The request bodies whose verdicts the document and the server must share: [body, the document's verdict]. */
const ORDER_BODIES = (productId: string, cycle: string): Array<[string, unknown]> => [
  ['minimal', { product_id: productId, billing_cycle: cycle }],
  ['hostname', { product_id: productId, billing_cycle: cycle, hostname: 'srv1.example.com' }],
  ['config_options empty', { product_id: productId, billing_cycle: cycle, config_options: {} }],
  ['extra field', { product_id: productId, billing_cycle: cycle, coupon: 'x' }],
  ['numeric product_id', { product_id: Number(productId), billing_cycle: cycle }],
  ['product_id 0', { product_id: '0', billing_cycle: cycle }],
  ['unknown cycle', { product_id: productId, billing_cycle: 'weekly' }],
  ['no cycle', { product_id: productId }],
  ['option key not digits', { product_id: productId, billing_cycle: cycle, config_options: { os: '1' } }],
  ['option value negative', { product_id: productId, billing_cycle: cycle, config_options: { 1: -1 } }],
  ['option value fraction', { product_id: productId, billing_cycle: cycle, config_options: { 1: 1.5 } }],
  ['option value 65 chars', { product_id: productId, billing_cycle: cycle, config_options: { 1: 'x'.repeat(65) } }],
  ['option value null', { product_id: productId, billing_cycle: cycle, config_options: { 1: null } }],
  ['config_options null', { product_id: productId, billing_cycle: cycle, config_options: null }],
  ['hostname empty', { product_id: productId, billing_cycle: cycle, hostname: '' }],
  ['hostname with underscore', { product_id: productId, billing_cycle: cycle, hostname: 'a_b.example.com' }],
  ['hostname null', { product_id: productId, billing_cycle: cycle, hostname: null }],
  ['array', [{ product_id: productId, billing_cycle: cycle }]],
  ['empty object', {}],
];

const ACTION_BODIES: Array<[string, unknown]> = [
  ['extra field', { action: 'reboot', force: true }],
  ['numeric action', { action: 5 }],
  ['no action', {}],
  ['null action', { action: null }],
  ['unknown action', { action: 'fly' }],
];

const WEBHOOK_BODIES: Array<[string, unknown]> = [
  ['https url', { url: 'https://hooks.example.com/reseller' }],
  ['rotate', { url: 'https://hooks.example.com/reseller', rotate_secret: true }],
  ['http url', { url: 'http://hooks.example.com/reseller' }],
  ['not a url', { url: 'not a url' }],
  ['private address', { url: 'https://hooks.internal-example.com/x' }],
  ['url too long', { url: `https://hooks.example.com/${'x'.repeat(2048)}` }],
  ['no url', {}],
  ['rotate string', { url: 'https://hooks.example.com/reseller', rotate_secret: 'yes' }],
  ['extra field', { url: 'https://hooks.example.com/reseller', events: ['order.created'] }],
  ['unset', { url: null }],
  ['unset and rotate', { url: null, rotate_secret: true }],
];

interface SweepTarget {
  label: string;
  app: FastifyInstance;
  keys: Record<string, string>;
  profile: 'A' | 'B';
  /** Issues a key with its own limits (for 429). */
  issueKey(scopes: string[], rateLimits: { perMinute: number; burst: number; perDay: number }): Promise<string>;
  stopUpstream(): Promise<void>;
}

async function sweep(target: SweepTarget): Promise<DocumentClient> {
  const send = sender(target.app);
  const docAnswer = await send('GET', '/v1/openapi.json');
  assert.equal(docAnswer.status, 200);
  const doc = JSON.parse(docAnswer.body) as Json;
  const client = new DocumentClient(doc);
  const all = target.keys['acme:all'];
  const none = target.keys['acme:none'];
  const go = async (method: string, url: string, options: Parameters<Send>[2] = {}, label?: string) => {
    const answer = await send(method, url, options);
    return { answer, body: client.check(method, url, answer, label) };
  };

  // Examples and generator usability come from the document alone.
  for (const { where, schema, value } of examples(doc)) {
    const errors = client.errors(schema, value);
    if (errors) client.fail(`example ${where}: ${errors}`);
  }
  for (const problem of generatorProblems(doc)) client.fail(`generator: ${problem}`);
  for (const problem of unmarkedPromises(doc)) client.fail(`headers: ${problem}`);
  // A replayed problem is the stored one (contract §5): its request_id is the first request's, not X-Request-Id.
  if (!/Idempotent-Replayed/.test(String(doc.components.schemas.Problem.properties.request_id.description))) client.fail('Problem.request_id does not say what it is on a replay');
  // The body example of PUT /v1/webhooks is a URL the server can take (https).
  if (!/^https:\/\//.test(String(doc.paths['/v1/webhooks'].put.requestBody.content['application/json'].example.url))) client.fail('PUT /v1/webhooks: its example URL is not https: the server refuses it (422)');

  // Successes, and the ids the rest needs.
  await go('GET', '/v1/health');
  await go('GET', '/v1/openapi.json');
  await go('GET', '/v1/me', { key: all });
  const products = (await go('GET', '/v1/products', { key: all })).body.data as Json[];
  const product = products.find((p) => (p.prices as Json[]).length > 0) ?? products[0];
  assert.ok(product, 'a product');
  for (const p of products) await go('GET', `/v1/products/${p.id}`, { key: all });
  const services = (await go('GET', '/v1/services?per_page=100', { key: all })).body.data as Json[];
  const service = services.find((s) => s.status === 'active') ?? services[0];
  assert.ok(service, 'a service');
  for (const page of [1, 2, 3, 1000]) await go('GET', `/v1/services?page=${page}&per_page=2`, { key: all });
  for (const s of services) {
    await go('GET', `/v1/services/${s.id}`, { key: all });
    await go('GET', `/v1/services/${s.id}/credentials`, { key: all });
  }
  await go('GET', '/v1/billing/balance', { key: all });
  const invoices = (await go('GET', '/v1/billing/invoices?per_page=100', { key: all })).body.data as Json[];
  for (const page of [1, 2, 50]) await go('GET', `/v1/billing/invoices?page=${page}&per_page=3`, { key: all });
  if (invoices[0]) await go('GET', `/v1/billing/invoices/${invoices[0].id}/pdf`, { key: all });
  await go('GET', '/v1/webhooks', { key: all });
  await go('PUT', '/v1/webhooks', { key: all, body: { url: 'https://hooks.example.com/reseller' } });
  await go('GET', '/v1/webhooks', { key: all });
  await go('PUT', '/v1/webhooks', { key: all, body: { url: 'https://hooks.example.com/reseller' } });
  await go('PUT', '/v1/webhooks', { key: all, body: { url: null } });

  // An order, read back, replayed; then the same key with another body (409) and on another endpoint.
  const cycle = ((product.prices as Json[])[0]?.billing_cycle as string | undefined) ?? 'monthly';
  const orderKey = fresh('order');
  const orderBody = { product_id: product.id, billing_cycle: cycle, hostname: 'shop.example.com' };
  const placed = await go('POST', '/v1/orders', { key: all, body: orderBody, headers: { 'idempotency-key': orderKey } });
  if (placed.answer.status === 201) {
    await go('GET', `/v1/orders/${placed.body.id}`, { key: all });
    await go('POST', '/v1/orders', { key: all, body: orderBody, headers: { 'idempotency-key': orderKey } }, 'order replay');
    await go('POST', '/v1/orders', { key: all, body: { ...orderBody, hostname: 'other.example.com' }, headers: { 'idempotency-key': orderKey } }, 'order conflict');
    await go('POST', `/v1/services/${service.id}/actions`, { key: all, body: { action: 'reboot' }, headers: { 'idempotency-key': orderKey } }, 'key on another endpoint');
  } else client.fail(`POST /v1/orders: no order placed (${placed.answer.status} ${placed.answer.body.slice(0, 200)})`);

  // Every action the document offers, on every service (success, 202, 409 action_not_allowed, 422 by the backend).
  const actions = (doc.components.schemas.ActionInput as Json).properties.action.enum as string[];
  for (const s of services.slice(0, 4)) {
    for (const action of actions) {
      const key = fresh('action');
      const body = { action };
      const first = await go('POST', `/v1/services/${s.id}/actions`, { key: all, body, headers: { 'idempotency-key': key } }, `action ${action} on ${s.status}`);
      if ([200, 202, 409, 422].includes(first.answer.status)) await go('POST', `/v1/services/${s.id}/actions`, { key: all, body, headers: { 'idempotency-key': key } }, `action ${action} replayed`);
    }
  }

  // 401: no key, a malformed key, a revoked and an expired key, on every authenticated operation.
  const operations = Object.entries(doc.paths as Json).flatMap(([path, item]) => Object.entries(item as Json).map(([method, op]) => ({ method: method.toUpperCase(), path, op: op as Json })));
  const concrete = (path: string) => path.replace('{id}', path.includes('invoices') ? String(invoices[0]?.id ?? '1') : String(service.id));
  const bodyFor = (path: string) => (path === '/v1/orders' ? orderBody : path.endsWith('/actions') ? { action: actions[0] } : path === '/v1/webhooks' ? { url: null } : undefined);
  for (const { method, path, op } of operations) {
    const url = concrete(path.replace('/v1/orders/{id}', `/v1/orders/${placed.body?.id ?? '1'}`));
    const body = bodyFor(path);
    const idem: Record<string, string> = op.parameters.some((p: Json) => p.name === 'Idempotency-Key') ? { 'idempotency-key': fresh('auth') } : {};
    // 400: a key in the query string, everywhere.
    await go(method, `${url}${url.includes('?') ? '&' : '?'}api_key=rk_x`, { body, headers: idem }, `${method} ${path} key in query`);
    if (op['x-required-scope'] === 'public') continue;
    await go(method, url, { body, headers: idem }, `${method} ${path} no key`);
    await go(method, url, { body, headers: { ...idem, authorization: 'Bearer nonsense' } }, `${method} ${path} malformed key`);
    await go(method, url, { key: target.keys['acme:revoked'], body, headers: idem }, `${method} ${path} revoked key`);
    await go(method, url, { key: target.keys['acme:expired'], body, headers: idem }, `${method} ${path} expired key`);
    if (op['x-required-scope'] !== 'any') await go(method, url, { key: none, body, headers: idem }, `${method} ${path} no scope`);
    // HEAD of a GET: the same status and headers, no body.
    if (method === 'GET') {
      const head = await send('HEAD', url, { key: all });
      const get = await send('GET', url, { key: all });
      if (head.status !== get.status || head.body !== '') client.fail(`HEAD ${path}: ${head.status} with ${head.body.length} bytes, GET ${get.status}`);
    }
  }

  // 404: unknown records and another account's.
  const beta = target.keys['beta:all'];
  for (const url of ['/v1/products/999999', '/v1/orders/999999', '/v1/services/999999', '/v1/services/999999/credentials', '/v1/billing/invoices/999999/pdf', '/v1/nothing-here']) {
    await go('GET', url, { key: all });
  }
  await go('GET', `/v1/services/${service.id}`, { key: beta }, 'another account\'s service');
  await go('POST', '/v1/services/999999/actions', { key: all, body: { action: actions[0] }, headers: { 'idempotency-key': fresh('404') } });
  // 405.
  await go('DELETE', '/v1/orders', { key: all });
  await go('POST', '/v1/me', { key: all });
  await go('PATCH', '/v1/webhooks', { key: all });

  // 400 on input, and the document's verdicts against the server's.
  for (const [label, url] of [
    ['page 0', '/v1/services?page=0'], ['per_page 101', '/v1/services?per_page=101'], ['page abc', '/v1/billing/invoices?page=abc'],
    ['page 1.5', '/v1/billing/invoices?page=1.5'], ['id abc', '/v1/orders/abc'], ['id 0', '/v1/services/0'], ['id leading zero', '/v1/services/01'],
    ['id 19 digits', '/v1/products/1234567890123456789'], ['unknown query', '/v1/services?sort=id'],
  ] as const) {
    const { answer } = await go('GET', url, { key: all }, `GET ${label}`);
    const path = client.operation('GET', url)?.path as string;
    const query = new URLSearchParams(url.split('?')[1] ?? '');
    let valid = true;
    for (const [name, value] of query) {
      const schema = parameterSchema(doc, path, 'get', name);
      if (!schema) continue; // an undocumented parameter: a client would not send it
      valid &&= client.errors(schema, /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value) === undefined;
    }
    const id = url.split('?')[0]?.split('/')[3];
    if (path.includes('{id}') && id) valid &&= client.errors(parameterSchema(doc, path, 'get', 'id'), id) === undefined;
    if (valid && answer.status === 400) client.fail(`request GET ${label}: the document takes it, the server answers 400`);
    if (!valid && answer.status !== 400) client.fail(`request GET ${label}: the document refuses it, the server answers ${answer.status}`);
  }
  for (const [label, key] of [['80 chars', 'k'.repeat(80)], ['81 chars', 'k'.repeat(81)], ['quoted', `"quoted-${++counter}"`], ['space', 'a b'], ['colon', 'a:b'], ['empty', '']] as const) {
    // An action no profile has: refused (422) once the key is read, so the key is never stored.
    const { answer } = await go('POST', `/v1/services/${service.id}/actions`, { key: all, body: { action: 'no-such-action' }, headers: { 'idempotency-key': key } }, `Idempotency-Key ${label}`);
    const valid = client.errors(parameterSchema(doc, '/v1/services/{id}/actions', 'post', 'Idempotency-Key'), key) === undefined;
    const keyRefused = answer.status === 400 && /idempotency_key/.test(answer.body);
    if (valid === keyRefused) client.fail(`request Idempotency-Key ${label}: the document ${valid ? 'takes' : 'refuses'} it, the server answers ${answer.status} ${answer.body.slice(0, 160)}`);
  }
  await go('POST', '/v1/orders', { key: all, body: orderBody }, 'no Idempotency-Key');
  await go('POST', '/v1/orders', { key: all, raw: '{"product_id":', headers: { 'idempotency-key': fresh('bad-json') } }, 'malformed JSON');

  for (const [label, body] of ORDER_BODIES(product.id as string, cycle)) {
    const { answer } = await go('POST', '/v1/orders', { key: all, body, headers: { 'idempotency-key': fresh('body') } }, `order body ${label}`);
    verdict(client, `POST /v1/orders ${label}`, requestSchema(doc, '/v1/orders', 'post'), body, answer);
  }
  // Every action of either profile: those the document does not offer must be refused (422 invalid_action).
  const anyAction = [...new Set([...PROFILE_ACTIONS.A, ...PROFILE_ACTIONS.B])];
  for (const [label, body] of [...ACTION_BODIES, ...anyAction.map((action): [string, unknown] => [action, { action }])]) {
    const { answer } = await go('POST', `/v1/services/${service.id}/actions`, { key: all, body, headers: { 'idempotency-key': fresh('body') } }, `action body ${label}`);
    verdict(client, `POST actions ${label}`, requestSchema(doc, '/v1/services/{id}/actions', 'post'), body, answer);
  }
  for (const [label, body] of WEBHOOK_BODIES) {
    const { answer } = await go('PUT', '/v1/webhooks', { key: all, body }, `webhook body ${label}`);
    verdict(client, `PUT /v1/webhooks ${label}`, requestSchema(doc, '/v1/webhooks', 'put'), body, answer);
  }
  // Every request-body example as a client would send it.
  for (const { method, path, op } of operations) {
    const media = op.requestBody?.content?.['application/json'] as Json | undefined;
    if (!media) continue;
    const headers: Record<string, string> = op.parameters.some((p: Json) => p.name === 'Idempotency-Key') ? { 'idempotency-key': fresh('example') } : {};
    const { answer } = await go(method, concrete(path), { key: all, body: media.example, headers }, `${method} ${path} with its example body`);
    if (answer.status === 400) client.fail(`${method} ${path}: its own request example is refused with 400: ${answer.body.slice(0, 200)}`);
  }

  // 413, 415.
  await go('POST', '/v1/orders', { key: all, raw: JSON.stringify({ product_id: '1', billing_cycle: 'monthly', hostname: 'x'.repeat(70_000) }), headers: { 'idempotency-key': fresh('big') } }, 'body too large');
  await go('PUT', '/v1/webhooks', { key: all, raw: 'url=https://x', contentType: 'application/x-www-form-urlencoded' }, 'form body');
  await go('POST', '/v1/orders', { key: all, raw: 'x', contentType: 'text/plain', headers: { 'idempotency-key': fresh('text') } }, 'text body');

  // 429: a key with one request a minute; then the same limit behind every operation.
  const slow = await target.issueKey(['read:products', 'read:services'], { perMinute: 1, burst: 0, perDay: 1000 });
  await go('GET', '/v1/products', { key: slow }, 'first within the limit');
  await go('GET', '/v1/products', { key: slow }, 'rate limited');
  await go('GET', '/v1/me', { key: slow }, 'rate limited, any scope');
  await go('GET', '/v1/services', { key: slow }, 'rate limited, list');
  const daily = await target.issueKey(['read:billing'], { perMinute: 60, burst: 20, perDay: 1 });
  await go('GET', '/v1/billing/balance', { key: daily }, 'daily quota');
  await go('GET', '/v1/billing/balance', { key: daily }, 'daily quota spent');

  // 503: the upstream down (health and the operations that reach it).
  await target.stopUpstream();
  // Health keeps a check's result for one second.
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  if ((await go('GET', '/v1/health', {}, 'upstream down')).answer.status !== 503) client.fail('GET /v1/health: not 503 with the upstream down');
  await go('GET', '/v1/products', { key: all }, 'upstream down');
  await go('GET', `/v1/services/${service.id}`, { key: all }, 'upstream down');
  await go('POST', '/v1/orders', { key: all, body: orderBody, headers: { 'idempotency-key': fresh('down') } }, 'upstream down');
  await go('POST', `/v1/services/${service.id}/actions`, { key: all, body: { action: actions[0] }, headers: { 'idempotency-key': fresh('down') } }, 'upstream down');
  return client;
}

function backendTarget(gw: BackendGateway, profile: 'A' | 'B'): SweepTarget {
  const keys = new KeyService(gw.stores.keys, TEST_PEPPER);
  return {
    label: `${gw.backend} ${profile}`,
    app: gw.app,
    keys: gw.keys,
    profile,
    async issueKey(scopes, rateLimits) {
      return (await keys.issue({ accountId: 'acme', name: fresh('limited'), scopes: scopes as never, rateLimits })).key;
    },
    stopUpstream: () => gw.stopUpstream(),
  };
}

for (const [backend, profile] of [['whmcs', 'A'], ['fossbilling', 'A'], ['whmcs', 'B']] as const) {
  t.test(`a client from the served document: ${backend}, profile ${profile}`, async (t) => {
    const gw = await buildBackendGateway(backend, { profile });
    t.teardown(() => gw.close());
    const client = await sweep(backendTarget(gw, profile));
    const expected = [200, 201, ...(backend === 'whmcs' && profile === 'A' ? [202] : []), 400, 401, 403, 404, 405, 409, 413, 415, 422, 429, 503];
    assert.deepEqual(expected.filter((status) => !client.statuses.has(status)), [], 'every status was provoked');
    assert.deepEqual(client.mismatches, [], `${client.mismatches.length} mismatches:\n${client.mismatches.join('\n')}`);
  });
}

t.test('a client from the served document: 410 replay_stale (profile A)', async (t) => {
  let now = Date.UTC(2026, 10, 22, 9, 0, 0);
  const stores = createMemoryStores({ now: () => now });
  const gw = await buildTestGateway({ stores });
  t.teardown(() => gw.close());
  const send = sender(gw.app);
  const client = new DocumentClient(JSON.parse((await send('GET', '/v1/openapi.json')).body) as Json);
  const key = gw.keys['acme:all'];
  const order = { product_id: '1', billing_cycle: 'monthly', hostname: 'shop.example.com' };
  const first = await send('POST', '/v1/orders', { key, body: order, headers: { 'idempotency-key': 'stale-1' } });
  client.check('POST', '/v1/orders', first);
  now += 2 * 3_600_000;
  const stale = await send('POST', '/v1/orders', { key, body: order, headers: { 'idempotency-key': 'stale-1' } });
  assert.equal(stale.status, 410, stale.body);
  client.check('POST', '/v1/orders', stale, 'replay after two hours');
  assert.deepEqual(client.mismatches, [], client.mismatches.join('\n'));
});
