/**
 * An operator's automation built from the admin API's served OpenAPI document alone
 * (GET /admin/v1/openapi.json), as test/openapi/integrator-client.test.ts does for v1's: the same
 * strict client (test/helpers/openapi-client.ts) provokes every admin operation's success and every
 * error status it can (400 401 403 404 405 409 413 415 503; 410 and 429: admin-client-windows.test.ts)
 * with memory stores, and checks each answer against the document: status listed, media type,
 * schema, headers (those it marks required present, those present documented), the problem's
 * reason one its status names. It also
 * checks the examples, what code generators need, the headers the API always sends being marked
 * required, that every admin token's scopes open exactly the operations the document gives them,
 * and that the request schemas take what the server takes and refuse what it refuses.
 *
 * test/admin/openapi.test.ts checks the document's own shape.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { ADMIN_SCOPES } from '../../src/admin/tokens.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { StoreUnavailableError, type Stores } from '../../src/stores/types.js';
import { newEventId } from '../../src/webhooks/signing.js';
import { bearer } from '../helpers/gateway.js';
import { DocumentClient, examples, generatorProblems, parameterSchema, requestSchema, sender, verdict, type Json, type Send } from '../helpers/openapi-client.js';
import { buildAdminGateway, type AdminGateway } from './helpers.js';

const DOCUMENT = '/admin/v1/openapi.json';

let counter = 0;
const fresh = (label: string) => `admin-${label}-${process.pid}-${++counter}`;

/**
 * The headers the admin API always sends must be marked required, or a generated client types them
 * optional: X-Request-Id and Cache-Control on every answer, WWW-Authenticate on 401 and 403,
 * Retry-After on 429, Link on a page, and a header an operation's success documents as its own
 * (Location on a created account).
 */
function unmarkedPromises(doc: Json): string[] {
  const problems: string[] = [];
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      for (const [status, response] of Object.entries(op.responses as Json)) {
        const promised = ['X-Request-Id', 'Cache-Control'];
        if (status === '401' || status === '403') promised.push('WWW-Authenticate');
        if (status === '429') promised.push('Retry-After');
        if (status === '201' && path === '/admin/v1/accounts') promised.push('Location');
        if (response.content?.['application/json']?.schema?.$ref?.endsWith('Page')) promised.push('Link');
        for (const name of promised) if (response.headers?.[name]?.required !== true) problems.push(`${method} ${path} ${status}: header ${name} is not marked required`);
      }
    }
  }
  return problems;
}

/** Memory stores whose account reads can be made to fail as a Redis outage does. */
function storesGoingDown(): { stores: Stores; down: { on: boolean } } {
  const stores = createMemoryStores();
  const down = { on: false };
  for (const method of ['getAccount', 'listAccounts', 'getKey'] as const) {
    const original = stores.keys[method].bind(stores.keys) as (...args: unknown[]) => Promise<unknown>;
    (stores.keys as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      if (down.on) throw new StoreUnavailableError('Redis did not answer within 1000 ms');
      return original(...args);
    };
  }
  return { stores, down };
}

const ACCOUNT_BODIES = (upstream: () => string): Array<[string, unknown]> => [
  ['minimal', { id: fresh('acct'), name: 'Shop', upstream_id: upstream() }],
  ['id 64 chars', { id: `a${'b'.repeat(63)}`, name: 'Shop', upstream_id: upstream() }],
  ['id 65 chars', { id: `a${'b'.repeat(64)}`, name: 'Shop', upstream_id: upstream() }],
  ['id starting with a dot', { id: '.shop', name: 'Shop', upstream_id: upstream() }],
  ['id with a slash', { id: 'a/b', name: 'Shop', upstream_id: upstream() }],
  ['name empty', { id: fresh('acct'), name: '', upstream_id: upstream() }],
  ['name 201 chars', { id: fresh('acct'), name: 'n'.repeat(201), upstream_id: upstream() }],
  ['name with a line feed', { id: fresh('acct'), name: 'a\nb', upstream_id: upstream() }],
  ['upstream_id a number', { id: fresh('acct'), name: 'Shop', upstream_id: 7 }],
  ['no upstream_id', { id: fresh('acct'), name: 'Shop' }],
  ['extra field', { id: fresh('acct'), name: 'Shop', upstream_id: upstream(), plan: 'gold' }],
  ['array', [{ id: fresh('acct'), name: 'Shop', upstream_id: upstream() }]],
];

const CHANGE_BODIES: Array<[string, unknown]> = [
  ['name', { name: 'Renamed' }],
  ['empty', {}],
  ['name null', { name: null }],
  ['extra field', { name: 'Renamed', status: 'disabled' }],
  ['name 201 chars', { name: 'n'.repeat(201) }],
];

const KEY_BODIES: Array<[string, unknown]> = [
  ['minimal', { name: 'panel', scopes: ['read:products'] }],
  ['no scopes', { name: 'panel', scopes: [] }],
  ['limits', { name: 'panel', scopes: [], rate_limits: { per_minute: 10, burst: 0, per_day: 100 } }],
  ['limits null', { name: 'panel', scopes: [], rate_limits: null }],
  ['expires null', { name: 'panel', scopes: [], expires_at: null }],
  ['expires in the future', { name: 'panel', scopes: [], expires_at: '2099-01-01T00:00:00Z' }],
  ['expires without offset', { name: 'panel', scopes: [], expires_at: '2099-01-01T00:00:00' }],
  ['expires a date', { name: 'panel', scopes: [], expires_at: '2099-01-01' }],
  ['unknown scope', { name: 'panel', scopes: ['write:everything'] }],
  ['per_minute 0', { name: 'panel', scopes: [], rate_limits: { per_minute: 0 } }],
  ['burst fraction', { name: 'panel', scopes: [], rate_limits: { burst: 1.5 } }],
  ['limits extra field', { name: 'panel', scopes: [], rate_limits: { per_hour: 5 } }],
  ['no name', { scopes: [] }],
  ['extra field', { name: 'panel', scopes: [], key: 'rk_x' }],
];

const ROTATE_BODIES: Array<[string, unknown]> = [
  ['empty', {}],
  ['grace 3600', { grace_seconds: 3600 }],
  ['grace negative', { grace_seconds: -1 }],
  ['grace 31 days', { grace_seconds: 31 * 86_400 }],
  ['grace string', { grace_seconds: '60' }],
  ['extra field', { grace_seconds: 0, now: true }],
];

async function sweep(gw: AdminGateway, down: { on: boolean }): Promise<DocumentClient> {
  const send: Send = sender(gw.ops);
  const token = (name: string) => gw.tokens[name]?.token as string;
  const all = token('all');
  const docAnswer = await send('GET', DOCUMENT, { key: token('admin:read') });
  assert.equal(docAnswer.status, 200, docAnswer.body);
  const doc = JSON.parse(docAnswer.body) as Json;
  const client = new DocumentClient(doc, 'AdminProblem');
  const go = async (method: string, url: string, options: Parameters<Send>[2] = {}, label?: string) => {
    const answer = await send(method, url, options);
    return { answer, body: client.check(method, url, answer, label) };
  };
  let upstream = 100;
  const nextUpstream = () => String(++upstream);

  // The document alone.
  for (const { where, schema, value } of examples(doc)) {
    const errors = client.errors(schema, value);
    if (errors) client.fail(`example ${where}: ${errors}`);
  }
  for (const problem of generatorProblems(doc)) client.fail(`generator: ${problem}`);
  for (const problem of unmarkedPromises(doc)) client.fail(`headers: ${problem}`);

  // Accounts.
  await go('GET', DOCUMENT, { key: all });
  const account = fresh('shop');
  const created = await go('POST', '/admin/v1/accounts', { key: all, body: { id: account, name: 'Shop', upstream_id: nextUpstream() } });
  assert.equal(created.answer.status, 201, created.answer.body);
  await go('POST', '/admin/v1/accounts', { key: all, body: { id: account, name: 'Shop', upstream_id: nextUpstream() } }, 'account_exists');
  await go('POST', '/admin/v1/accounts', { key: all, body: { id: fresh('shop'), name: 'Shop', upstream_id: '1' } }, 'upstream_id_taken');
  await go('POST', '/admin/v1/accounts', { key: all, body: { id: fresh('shop'), name: 'Shop', upstream_id: '012' } }, 'upstream_id malformed');
  for (const page of [1, 2, 1000]) await go('GET', `/admin/v1/accounts?page=${page}&per_page=2`, { key: all });
  await go('GET', `/admin/v1/accounts/${account}`, { key: all });
  await go('PATCH', `/admin/v1/accounts/${account}`, { key: all, body: { name: 'Shop renamed' } });
  await go('PATCH', `/admin/v1/accounts/${account}`, { key: all, body: { upstream_id: '2' } }, 'PATCH upstream_id_taken');

  // Keys: issued, replayed, conflicting, listed, read, rotated, revoked.
  const issueKey = fresh('issue');
  const keyBody = { name: 'panel', scopes: ['read:products'] };
  const issued = await go('POST', `/admin/v1/accounts/${account}/keys`, { key: all, body: keyBody, headers: { 'idempotency-key': issueKey } });
  assert.equal(issued.answer.status, 201, issued.answer.body);
  await go('POST', `/admin/v1/accounts/${account}/keys`, { key: all, body: keyBody, headers: { 'idempotency-key': issueKey } }, 'issue replayed');
  await go('POST', `/admin/v1/accounts/${account}/keys`, { key: all, body: { ...keyBody, name: 'other' }, headers: { 'idempotency-key': issueKey } }, 'issue conflict');
  await go('POST', `/admin/v1/keys/${issued.body.id}/rotate`, { key: all, body: {}, headers: { 'idempotency-key': issueKey } }, 'key on another endpoint');
  const [raceA, raceB] = await Promise.all([1, 2].map(() => send('POST', `/admin/v1/accounts/${account}/keys`, { key: all, body: keyBody, headers: { 'idempotency-key': `race-${counter}` } })));
  client.check('POST', `/admin/v1/accounts/${account}/keys`, raceA as never, 'issue raced');
  client.check('POST', `/admin/v1/accounts/${account}/keys`, raceB as never, 'issue raced');
  await go('POST', '/admin/v1/accounts/nobody/keys', { key: all, body: keyBody, headers: { 'idempotency-key': fresh('404') } }, 'issue for no account');
  for (const page of [1, 2, 50]) await go('GET', `/admin/v1/accounts/${account}/keys?page=${page}&per_page=1`, { key: all });
  await go('GET', `/admin/v1/keys/${issued.body.id}`, { key: all });
  const rotateKey = fresh('rotate');
  const rotated = await go('POST', `/admin/v1/keys/${issued.body.id}/rotate`, { key: all, body: { grace_seconds: 60 }, headers: { 'idempotency-key': rotateKey } });
  assert.equal(rotated.answer.status, 201, rotated.answer.body);
  await go('POST', `/admin/v1/keys/${issued.body.id}/rotate`, { key: all, body: { grace_seconds: 60 }, headers: { 'idempotency-key': rotateKey } }, 'rotate replayed');
  await go('POST', `/admin/v1/keys/${rotated.body.new.id}/revoke`, { key: all });
  await go('POST', `/admin/v1/keys/${rotated.body.new.id}/rotate`, { key: all, body: {}, headers: { 'idempotency-key': fresh('inactive') } }, 'rotate revoked');
  await go('POST', `/admin/v1/accounts/${account}/disable`, { key: all });
  await go('POST', `/admin/v1/accounts/${account}/keys`, { key: all, body: keyBody, headers: { 'idempotency-key': fresh('disabled') } }, 'issue for a disabled account');
  await go('POST', `/admin/v1/accounts/${account}/enable`, { key: all });

  // Webhooks: none set (404), set through v1, a failed and a pending event, replays, enable.
  await go('GET', `/admin/v1/accounts/${account}/webhook`, { key: all }, 'no endpoint');
  await go('POST', `/admin/v1/accounts/${account}/webhook/enable`, { key: all }, 'enable no endpoint');
  const set = await gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers: bearer(gw.keys['acme:all']), payload: { url: 'https://hooks.example.com/in' } });
  assert.equal(set.statusCode, 200, set.body);
  const [queued] = (await gw.stores.webhooks.listDeliveries('acme', 0, 1)).entries;
  assert.ok(queued, 'a queued event');
  const failedId = newEventId();
  await gw.stores.webhooks.logDelivery('acme', { ...queued, eventId: failedId, state: 'failed', attempts: 3, lastStatus: 500, lastError: null, nextAttemptAt: null }, 100);
  await go('GET', '/admin/v1/accounts/acme/webhook', { key: all });
  for (const page of [1, 2]) await go('GET', `/admin/v1/accounts/acme/webhook/deliveries?page=${page}&per_page=1`, { key: all });
  await go('POST', `/admin/v1/accounts/acme/webhook/deliveries/${failedId}/replay`, { key: all });
  await go('POST', `/admin/v1/accounts/acme/webhook/deliveries/${queued.eventId}/replay`, { key: all }, 'replay a pending event');
  await go('POST', `/admin/v1/accounts/acme/webhook/deliveries/${newEventId()}/replay`, { key: all }, 'replay an unknown event');
  await go('POST', '/admin/v1/accounts/acme/webhook/enable', { key: all });

  // Every operation: 401 (none, malformed, unknown token), 403 without its scope, its scope's own token let through, HEAD of a GET.
  const operations = Object.entries(doc.paths as Json).flatMap(([path, item]) => Object.entries(item as Json).map(([method, op]) => ({ method: method.toUpperCase(), path, op: op as Json })));
  const concrete = (path: string) => path.replace('/keys/{id}', `/keys/${issued.body.id}`).replace('{id}', 'acme').replace('{event_id}', failedId);
  const bodyFor = (op: Json) => (op.requestBody ? op.requestBody.content['application/json'].example : undefined);
  for (const { method, path, op } of operations) {
    const url = concrete(path);
    const body = bodyFor(op);
    const idem = (): Record<string, string> => (op.parameters.some((p: Json) => p.name === 'Idempotency-Key') ? { 'idempotency-key': fresh('auth') } : {});
    await go(method, url, { body, headers: idem() }, `${method} ${path} no token`);
    await go(method, url, { body, headers: { ...idem(), authorization: 'Bearer nonsense' } }, `${method} ${path} malformed token`);
    await go(method, url, { body, headers: { ...idem(), authorization: `Bearer rgadm_${'A'.repeat(43)}` } }, `${method} ${path} unknown token`);
    await go(method, url, { body, headers: { ...idem(), authorization: 'Basic YWRtaW46YWRtaW4=' } }, `${method} ${path} basic`);
    const scope = op['x-required-scope'] as string;
    for (const name of ADMIN_SCOPES) {
      const { answer } = await go(method, url, { key: token(name), body, headers: idem() }, `${method} ${path} with ${name}`);
      const refused = answer.status === 403;
      if (refused !== (scope !== 'any' && scope !== name)) client.fail(`${method} ${path} (x-required-scope ${scope}) with a token of ${name}: ${answer.status}`);
    }
    if (method === 'GET') {
      const head = await send('HEAD', url, { key: all });
      const get = await send('GET', url, { key: all });
      if (head.status !== get.status || head.body !== '') client.fail(`HEAD ${path}: ${head.status} with ${head.body.length} bytes, GET ${get.status}`);
    }
  }

  // 404 and 405 off the operations.
  for (const url of ['/admin/v1/accounts/nobody', '/admin/v1/keys/0123456789abcdef', '/admin/v1/accounts/nobody/webhook/deliveries', '/admin/v1/nothing-here']) await go('GET', url, { key: all });
  await go('DELETE', '/admin/v1/accounts/nobody', { key: all });
  await go('PUT', '/admin/v1/accounts', { key: all });
  await go('DELETE', '/admin/v1/keys/0123456789abcdef', { key: all });
  await go('GET', '/admin/v1/keys/0123456789abcdef/revoke', { key: all });

  // 400 on the query and the path, and the document's verdicts against the server's.
  for (const [label, url] of [
    ['page 0', '/admin/v1/accounts?page=0'], ['per_page 101', '/admin/v1/accounts?per_page=101'], ['page abc', '/admin/v1/accounts/acme/keys?page=abc'],
    ['page 1.5', '/admin/v1/accounts?page=1.5'], ['unknown query', '/admin/v1/accounts?sort=id'], ['key in query', '/admin/v1/accounts?api_key=rk_x'],
    ['key id short', '/admin/v1/keys/abc'], ['key id upper', '/admin/v1/keys/0123456789ABCDEF'], ['account id 100 chars', `/admin/v1/accounts/${'a'.repeat(100)}`],
    ['account id 101 chars', `/admin/v1/accounts/${'a'.repeat(101)}`],
  ] as const) {
    const { answer } = await go('GET', url, { key: all }, `GET ${label}`);
    const path = client.operation('GET', url)?.path as string;
    let valid = true;
    for (const [name, value] of new URLSearchParams(url.split('?')[1] ?? '')) {
      const schema = parameterSchema(doc, path, 'get', name);
      if (!schema) continue;
      valid &&= client.errors(schema, /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value) === undefined;
    }
    const id = url.split('?')[0]?.split('/')[4];
    if (path.includes('{id}') && id) valid &&= client.errors(parameterSchema(doc, path, 'get', 'id'), id) === undefined;
    if (valid && answer.status === 400) client.fail(`request GET ${label}: the document takes it, the server answers 400`);
    if (!valid && answer.status !== 400) client.fail(`request GET ${label}: the document refuses it, the server answers ${answer.status}`);
  }
  for (const [label, eventId] of [['event id', 'evt_abc'], ['event id bad', 'abc']] as const) {
    const url = `/admin/v1/accounts/acme/webhook/deliveries/${eventId}/replay`;
    const { answer } = await go('POST', url, { key: all }, `replay ${label}`);
    const valid = client.errors(parameterSchema(doc, '/admin/v1/accounts/{id}/webhook/deliveries/{event_id}/replay', 'post', 'event_id'), eventId) === undefined;
    if (valid === (answer.status === 400)) client.fail(`request replay ${label}: the document ${valid ? 'takes' : 'refuses'} it, the server answers ${answer.status}`);
  }
  for (const [label, key] of [['80 chars', 'k'.repeat(80)], ['81 chars', 'k'.repeat(81)], ['quoted', `"quoted-${++counter}"`], ['space', 'a b'], ['colon', 'a:b'], ['empty', '']] as const) {
    // A body the schema refuses: answered 400 at /name once the key is read, so nothing is issued.
    const { answer } = await go('POST', '/admin/v1/accounts/acme/keys', { key: all, body: { scopes: [] }, headers: { 'idempotency-key': key } }, `Idempotency-Key ${label}`);
    const valid = client.errors(parameterSchema(doc, '/admin/v1/accounts/{id}/keys', 'post', 'Idempotency-Key'), key) === undefined;
    const keyRefused = answer.status === 400 && /idempotency_key/.test(answer.body);
    if (valid === keyRefused) client.fail(`request Idempotency-Key ${label}: the document ${valid ? 'takes' : 'refuses'} it, the server answers ${answer.status} ${answer.body.slice(0, 160)}`);
  }
  await go('POST', '/admin/v1/accounts/acme/keys', { key: all, body: keyBody }, 'no Idempotency-Key');
  await go('POST', '/admin/v1/accounts', { key: all, raw: '{"id":' }, 'malformed JSON');
  await go('POST', '/admin/v1/accounts/acme/disable', { key: all, body: { now: true } }, 'a body where none is taken');

  for (const [label, body] of ACCOUNT_BODIES(nextUpstream)) {
    const { answer } = await go('POST', '/admin/v1/accounts', { key: all, body }, `account body ${label}`);
    verdict(client, `POST /admin/v1/accounts ${label}`, requestSchema(doc, '/admin/v1/accounts', 'post'), body, answer);
  }
  for (const [label, body] of CHANGE_BODIES) {
    const { answer } = await go('PATCH', '/admin/v1/accounts/beta', { key: all, body }, `change body ${label}`);
    verdict(client, `PATCH /admin/v1/accounts/{id} ${label}`, requestSchema(doc, '/admin/v1/accounts/{id}', 'patch'), body, answer);
  }
  for (const [label, body] of KEY_BODIES) {
    const { answer } = await go('POST', '/admin/v1/accounts/beta/keys', { key: all, body, headers: { 'idempotency-key': fresh('body') } }, `key body ${label}`);
    verdict(client, `POST /admin/v1/accounts/{id}/keys ${label}`, requestSchema(doc, '/admin/v1/accounts/{id}/keys', 'post'), body, answer);
  }
  for (const [label, body] of ROTATE_BODIES) {
    const target = (await send('POST', '/admin/v1/accounts/beta/keys', { key: all, body: keyBody, headers: { 'idempotency-key': fresh('to-rotate') } })).body;
    const { answer } = await go('POST', `/admin/v1/keys/${JSON.parse(target).id}/rotate`, { key: all, body, headers: { 'idempotency-key': fresh('body') } }, `rotate body ${label}`);
    verdict(client, `POST /admin/v1/keys/{id}/rotate ${label}`, requestSchema(doc, '/admin/v1/keys/{id}/rotate', 'post'), body, answer);
  }
  // Every request-body example as an operator would send it.
  for (const { method, path, op } of operations) {
    const media = op.requestBody?.content?.['application/json'] as Json | undefined;
    if (!media) continue;
    const headers: Record<string, string> = op.parameters.some((p: Json) => p.name === 'Idempotency-Key') ? { 'idempotency-key': fresh('example') } : {};
    const { answer } = await go(method, concrete(path), { key: all, body: media.example, headers }, `${method} ${path} with its example body`);
    if (answer.status === 400) client.fail(`${method} ${path}: its own request example is refused with 400: ${answer.body.slice(0, 200)}`);
  }

  // 413, 415.
  await go('POST', '/admin/v1/accounts', { key: all, raw: JSON.stringify({ id: fresh('big'), name: 'x'.repeat(70_000), upstream_id: '9' }) }, 'body too large');
  await go('POST', '/admin/v1/accounts', { key: all, raw: 'id=x', contentType: 'application/x-www-form-urlencoded' }, 'form body');
  await go('PATCH', '/admin/v1/accounts/beta', { key: all, raw: 'x', contentType: 'text/plain' }, 'text body');
  await go('POST', '/admin/v1/accounts/acme/keys', { key: all, body: keyBody, headers: { 'idempotency-key': fresh('gzip'), 'content-encoding': 'gzip' } }, 'gzip body');

  // Deleting an account, then reading it.
  await go('DELETE', `/admin/v1/accounts/${account}`, { key: all });
  await go('GET', `/admin/v1/accounts/${account}`, { key: all }, 'deleted account');

  // 503: the store down.
  down.on = true;
  await go('GET', '/admin/v1/accounts', { key: all }, 'store down');
  await go('GET', '/admin/v1/accounts/acme', { key: all }, 'store down');
  await go('POST', '/admin/v1/accounts/acme/keys', { key: all, body: keyBody, headers: { 'idempotency-key': fresh('down') } }, 'store down');
  await go('POST', `/admin/v1/keys/${issued.body.id}/revoke`, { key: all }, 'store down');
  down.on = false;
  return client;
}

t.test('an operator client from the served admin document', async (t) => {
  const { stores, down } = storesGoingDown();
  const gw = await buildAdminGateway({ stores });
  t.teardown(() => gw.close());
  const client = await sweep(gw, down);
  const expected = [200, 201, 202, 400, 401, 403, 404, 405, 409, 413, 415, 503];
  assert.deepEqual(expected.filter((status) => !client.statuses.has(status)), [], 'every status was provoked');
  assert.deepEqual(client.mismatches, [], `${client.mismatches.length} mismatches:\n${client.mismatches.join('\n')}`);
});
