import assert from 'node:assert/strict';
import t from 'tap';
import { ADMIN_REASONS, REASONS } from '../../src/errors.js';
import { buildAdminGateway } from '../admin/helpers.js';
import { bearer, buildTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * RFC 9457 §3.1.1: a problem's `type`, dereferenced, should document the problem type. The gateway
 * serves those pages itself (GET /problems/{reason}) and, given publicBaseUrl, points every type at
 * them; before, every type named https://reseller-gateway.dev/problems/…, which resolves nowhere.
 */
const TABLE = { ...REASONS, ...ADMIN_REASONS };
const ALL = Object.keys(TABLE) as Array<keyof typeof TABLE>;

function escaped(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

function assertStrictCsp(csp: unknown): void {
  assert.equal(typeof csp, 'string', 'Content-Security-Policy is sent');
  const directives = String(csp).split(';').map((part) => part.trim());
  assert.ok(directives.includes("default-src 'none'"), String(csp));
  assert.ok(!String(csp).includes('unsafe-inline') && !String(csp).includes('http'), String(csp));
}

t.test('problem type pages', async (t) => {
  let gw: TestGateway;
  t.before(async () => {
    gw = await buildTestGateway({ config: { rateLimits: { keyPerMinute: 60, keyBurst: 20, keyPerDay: 5000 } } });
  });
  t.teardown(() => gw.close());

  t.test('every reason of the closed table has an HTML page naming its status and title', async () => {
    for (const reason of ALL) {
      const response = await gw.app.inject({ method: 'GET', url: `/problems/${reason}` });
      assert.equal(response.statusCode, 200, `${reason}: ${response.body}`);
      assert.match(String(response.headers['content-type']), /^text\/html; charset=utf-8$/, reason);
      assertStrictCsp(response.headers['content-security-policy']);
      assert.match(String(response.headers['cache-control']), /^public, max-age=\d+$/, reason);
      assert.equal(response.headers['x-content-type-options'], 'nosniff');
      assert.ok(response.body.startsWith('<!doctype html>'), reason);
      assert.ok(response.body.includes(escaped(TABLE[reason].title)), `${reason} names its title`);
      assert.ok(response.body.includes(String(TABLE[reason].status)), `${reason} names its status`);
      assert.ok(response.body.includes(`<code>${reason}</code>`), `${reason} names itself`);
      // Self-contained: nothing fetched from elsewhere.
      assert.doesNotMatch(response.body, /<(script|link|img)\b|src=|https?:\/\/(?!reseller-gateway\.dev\/problems\/)/, reason);
    }
  });

  t.test('HEAD answers as GET, without a body', async () => {
    const response = await gw.app.inject({ method: 'HEAD', url: '/problems/rate_limited' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.body, '');
    assertStrictCsp(response.headers['content-security-policy']);
  });

  t.test('the index lists exactly the closed table, each linked', async () => {
    const response = await gw.app.inject({ method: 'GET', url: '/problems/' });
    assert.equal(response.statusCode, 200, response.body);
    assert.match(String(response.headers['content-type']), /^text\/html/);
    assertStrictCsp(response.headers['content-security-policy']);
    const linked = [...response.body.matchAll(/<a href="([a-z_]+)">/g)].map((match) => match[1]);
    assert.deepEqual([...linked].sort(), [...ALL].sort());
  });

  t.test('Accept: application/json gets the description as JSON', async () => {
    const one = await gw.app.inject({ method: 'GET', url: '/problems/insufficient_scope', headers: { accept: 'application/json' } });
    assert.equal(one.statusCode, 200);
    assert.match(String(one.headers['content-type']), /^application\/json/);
    assert.match(String(one.headers.vary), /accept/i);
    const body = one.json();
    assert.equal(body.reason, 'insufficient_scope');
    assert.equal(body.status, 403);
    assert.equal(body.title, REASONS.insufficient_scope.title);
    assert.equal(body.type, 'https://reseller-gateway.dev/problems/insufficient_scope');
    assert.ok(body.when.length > 0 && body.what_to_do.length > 0);
    const index = await gw.app.inject({ method: 'GET', url: '/problems/', headers: { accept: 'application/json' } });
    assert.deepEqual(index.json().problem_types.map((each: { reason: string }) => each.reason).sort(), [...ALL].sort());
    // A browser's Accept prefers HTML.
    const browser = await gw.app.inject({ method: 'GET', url: '/problems/not_found', headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
    assert.match(String(browser.headers['content-type']), /^text\/html/);
  });

  t.test('an unknown reason is a 404 problem, as any unknown route', async () => {
    for (const reason of ['nope', '__proto__', 'constructor', 'toString', 'NOT_FOUND']) {
      const response = await gw.app.inject({ method: 'GET', url: `/problems/${reason}` });
      assert.equal(response.statusCode, 404, reason);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/, reason);
      assert.equal(response.json().reason, 'not_found', reason);
      assert.ok(response.headers['x-request-id']);
    }
  });

  t.test('another method is 405 with Allow', async () => {
    const response = await gw.app.inject({ method: 'POST', url: '/problems/not_found', headers: { 'content-type': 'application/json' }, payload: '{}' });
    assert.equal(response.statusCode, 405);
    assert.equal(response.headers.allow, 'GET, HEAD');
  });

  t.test('needs no key and consumes nothing of a key sent along', async () => {
    const key = bearer(gw.keys['acme:all'] as string);
    const before = await gw.app.inject({ method: 'GET', url: '/v1/me', headers: key });
    const remaining = Number(before.headers['x-ratelimit-remaining']);
    for (let i = 0; i < 5; i++) {
      const page = await gw.app.inject({ method: 'GET', url: '/problems/not_found', headers: key });
      assert.equal(page.statusCode, 200);
      assert.equal(page.headers['x-ratelimit-remaining'], undefined, 'not an authenticated answer');
      assert.notEqual(page.headers['cache-control'], 'no-store');
    }
    const after = await gw.app.inject({ method: 'GET', url: '/v1/me', headers: key });
    // Only /v1/me itself counted (one more second may have refilled one).
    assert.ok(Number(after.headers['x-ratelimit-remaining']) >= remaining - 1, `${remaining} → ${after.headers['x-ratelimit-remaining']}`);
    const badKey = await gw.app.inject({ method: 'GET', url: '/problems/not_found', headers: bearer('rk_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA') });
    assert.equal(badKey.statusCode, 200, 'a bad key does not matter on a public page');
  });

  t.test('the OpenAPI document is unchanged in scope: no /problems path', async () => {
    const document = (await gw.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    assert.ok(Object.keys(document.paths).every((path) => path.startsWith('/v1/')));
  });
});

t.test('public pages count against the source-IP limit, as /v1/health does', async () => {
  const gw = await buildTestGateway({ config: { rateLimits: { ipPerMinute: 2 } } });
  try {
    for (let i = 0; i < 2; i++) assert.equal((await gw.app.inject({ method: 'GET', url: '/problems/' })).statusCode, 200);
    const refused = await gw.app.inject({ method: 'GET', url: '/problems/not_found' });
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.json().reason, 'rate_limited');
  } finally {
    await gw.close();
  }
});

t.test('with publicBaseUrl, every type resolves to this gateway', async (t) => {
  const origin = 'https://api.example.com';
  const gw = await buildAdminGateway({ config: { publicBaseUrl: `${origin}/` } });
  t.teardown(() => gw.close());

  /** The type's path on this gateway, after checking that it points here. */
  const pathOf = (type: string): string => {
    assert.ok(type.startsWith(`${origin}/problems/`), type);
    return new URL(type).pathname;
  };

  t.test('a real 404 and 401: their type is <publicBaseUrl>/problems/<reason>, and that path is its page', async () => {
    const notFound = await gw.app.inject({ method: 'GET', url: '/v1/nope' });
    const unauthenticated = await gw.app.inject({ method: 'GET', url: '/v1/me' });
    for (const [response, reason] of [[notFound, 'not_found'], [unauthenticated, 'unauthenticated']] as const) {
      const { type } = response.json();
      assert.equal(type, `${origin}/problems/${reason}`);
      const page = await gw.app.inject({ method: 'GET', url: pathOf(type) });
      assert.equal(page.statusCode, 200, page.body);
      assert.ok(page.body.includes(escaped(REASONS[reason].title)));
      assert.ok(page.body.includes(String(REASONS[reason].status)));
    }
  });

  t.test("the admin API's problems, admin-only reasons included, resolve to pages too", async () => {
    const body = { id: 'dup', name: 'Dup', upstream_id: '41' };
    assert.equal((await gw.admin('POST', '/admin/v1/accounts', { body })).statusCode, 201);
    const conflict = await gw.admin('POST', '/admin/v1/accounts', { body });
    assert.equal(conflict.statusCode, 409);
    const { type } = conflict.json();
    assert.equal(type, `${origin}/problems/account_exists`);
    const page = await gw.app.inject({ method: 'GET', url: pathOf(type) });
    assert.equal(page.statusCode, 200);
    assert.ok(page.body.includes(escaped(ADMIN_REASONS.account_exists.title)));
  });

  t.test('the OpenAPI examples show the same types', async () => {
    const document = (await gw.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const example = document.paths['/v1/me'].get.responses['401'].content['application/problem+json'].example;
    assert.equal(example.type, `${origin}/problems/unauthenticated`);
    const admin = (await gw.admin('GET', '/admin/v1/openapi.json')).json();
    assert.equal(admin.paths['/admin/v1/accounts'].get.responses['401'].content['application/problem+json'].example.type, `${origin}/problems/unauthenticated`);
  });

  t.test('the JSON description names the same type', async () => {
    const response = await gw.app.inject({ method: 'GET', url: '/problems/not_found', headers: { accept: 'application/json' } });
    assert.equal(response.json().type, `${origin}/problems/not_found`);
  });
});

t.test('an explicit problemTypeBase wins over publicBaseUrl', async () => {
  const gw = await buildTestGateway({ config: { publicBaseUrl: 'https://api.example.com', problemTypeBase: 'https://docs.example.com/errors/' } });
  try {
    assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/nope' })).json().type, 'https://docs.example.com/errors/not_found');
  } finally {
    await gw.close();
  }
});

t.test('without publicBaseUrl the default base stays as it was', async () => {
  const gw = await buildTestGateway();
  try {
    assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/nope' })).json().type, 'https://reseller-gateway.dev/problems/not_found');
  } finally {
    await gw.close();
  }
});
