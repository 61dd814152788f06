/**
 * What the passthrough sends upstream and what it keeps local: the client's credentials never
 * leave, each account's own upstream key does, writes carry a namespaced Idempotency-Key and are
 * replayed from the local record, local refusals send nothing, and /v1/me is the upstream's
 * customer with this gateway's key.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, ORDER, type PassthroughGateway, SERVICE, UPSTREAM_KEYS } from './harness.js';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

t.test('v1 passthrough: what is forwarded', async (t) => {
  let gw: PassthroughGateway;
  t.before(async () => {
    gw = await buildPassthroughGateway();
  });
  t.teardown(() => gw.close());
  t.beforeEach(() => {
    gw.upstream.received.length = 0;
  });

  t.test('sends the account\'s own upstream key, never the client\'s Authorization, cookies or forwarding headers', async () => {
    gw.upstream.answer(json(200, SERVICE));
    for (const [account, upstreamId] of [['acme', 'up-acme'], ['beta', 'up-beta']] as const) {
      const response = await gw.app.inject({
        method: 'GET',
        url: '/v1/services/7',
        headers: {
          ...bearer(gw.keys[`${account}:all`]),
          cookie: 'session=client-cookie',
          'x-forwarded-for': '203.0.113.9',
          'proxy-authorization': 'Basic Y2xpZW50',
          connection: 'keep-alive, x-secret-hop',
          'x-secret-hop': 'hop',
          traceparent: TRACEPARENT,
        },
      });
      assert.equal(response.statusCode, 200, response.body);
      const sent = gw.upstream.received.at(-1);
      assert.ok(sent);
      assert.equal(sent.method, 'GET');
      assert.equal(sent.url, '/v1/services/7');
      assert.equal(sent.headers.authorization, `Bearer ${UPSTREAM_KEYS[upstreamId]}`);
      assert.equal(sent.headers['x-upstream-account'], upstreamId);
      assert.equal(sent.headers['x-request-id'], response.headers['x-request-id']);
      // The trace continues: same trace id, this gateway's span as the parent.
      assert.match(String(sent.headers.traceparent), /^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
      assert.notEqual(sent.headers.traceparent, TRACEPARENT);
      for (const name of ['cookie', 'proxy-authorization', 'x-secret-hop']) assert.equal(sent.headers[name], undefined, name);
      // The client's address as this gateway found it (no trusted proxy here: the socket's), never its own header.
      assert.equal(sent.headers['x-forwarded-for'], '127.0.0.1');
      assert.doesNotMatch(JSON.stringify(sent.headers), /rk_/, 'no gateway key upstream');
    }
  });

  t.test('a list: the validated query goes upstream, the links are this gateway\'s own', async () => {
    const elsewhere = (page: number) => `/panel/v1/services?page=${page}&per_page=1&token=abc`;
    gw.upstream.answer(json(200, { data: [SERVICE], meta: { page: 2, per_page: 1, total: 3, last_page: 3 }, links: { first: elsewhere(1), prev: elsewhere(1), next: elsewhere(3), last: elsewhere(3) } }, { link: `<${elsewhere(1)}>; rel="first"` }));
    const response = await gw.app.inject({ method: 'GET', url: '/v1/services?per_page=001&page=2', headers: bearer(gw.keys['acme:all']) });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(gw.upstream.received.at(-1)?.url, '/v1/services?page=2&per_page=1');
    assert.deepEqual(response.json().links, { first: '/v1/services?page=1&per_page=1', prev: '/v1/services?page=1&per_page=1', next: '/v1/services?page=3&per_page=1', last: '/v1/services?page=3&per_page=1' });
    assert.equal(response.headers.link, '</v1/services?page=1&per_page=1>; rel="first", </v1/services?page=1&per_page=1>; rel="prev", </v1/services?page=3&per_page=1>; rel="next", </v1/services?page=3&per_page=1>; rel="last"');
  });

  t.test('a page longer than per_page is not this gateway\'s page: 502', async () => {
    gw.upstream.answer(json(200, { data: [SERVICE, SERVICE, SERVICE], meta: { page: 1, per_page: 2, total: 3, last_page: 2 }, links: { first: '/v1/services?page=1&per_page=2', prev: null, next: '/v1/services?page=2&per_page=2', last: '/v1/services?page=2&per_page=2' } }));
    const response = await gw.app.inject({ method: 'GET', url: '/v1/services?per_page=2', headers: bearer(gw.keys['acme:all']) });
    assert.equal(response.statusCode, 502, response.body);
    assert.equal(response.json().reason, 'upstream_error');
  });

  t.test('a read carries no body, so none of the client\'s Content-Type or Content-Length goes upstream', async () => {
    gw.upstream.answer(json(200, SERVICE));
    const response = await gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'text/html' } });
    assert.equal(response.statusCode, 200, response.body);
    const sent = gw.upstream.received.at(-1)!;
    assert.equal(sent.headers['content-type'], undefined);
    assert.equal(sent.headers['x-gateway-deadline'], undefined, 'the deadline stays with the gateway\'s dispatcher');
  });

  t.test('keeps the upstream\'s headers behind and states its own (rate limits, request id)', async () => {
    gw.upstream.answer(json(200, SERVICE, { 'set-cookie': 'upstream=1', 'x-powered-by': 'panel', 'x-ratelimit-remaining': '1', 'x-request-id': 'upstream-id', server: 'panel/1.0' }));
    const response = await gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:all']) });
    assert.equal(response.statusCode, 200);
    for (const name of ['set-cookie', 'x-powered-by', 'server']) assert.equal(response.headers[name], undefined, name);
    assert.notEqual(response.headers['x-request-id'], 'upstream-id');
    assert.notEqual(response.headers['x-ratelimit-remaining'], '1');
    assert.equal(response.headers['cache-control'], 'no-store');
  });

  t.test('strips fields the contract does not name', async () => {
    gw.upstream.answer(json(200, { ...SERVICE, internal_note: 'root password is hunter2' }));
    const response = await gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:all']) });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), SERVICE);
  });

  t.test('/v1/me: the upstream\'s customer under this gateway\'s account id, with this gateway\'s key', async () => {
    gw.upstream.answer(json(200, {
      account: { id: 'up-acme', name: 'Acme Hosting', company: null, email: 'ops@acme.example', status: 'active', currency: 'USD' },
      key: { id: 'upstream-key', name: 'passthrough', scopes: ['read:services'], created_at: '2026-01-01T00:00:00Z', expires_at: null, rate_limits: { per_minute: 1, burst: 1, per_day: 1, account_per_minute: null } },
    }));
    const response = await gw.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(gw.keys['acme:all']) });
    assert.equal(response.statusCode, 200, response.body);
    const me = response.json();
    assert.equal(me.account.id, 'acme');
    assert.equal(me.account.email, 'ops@acme.example');
    assert.notEqual(me.key.id, 'upstream-key');
    assert.equal(me.key.name, 'acme:all');
    assert.equal(me.key.rate_limits.per_minute, 100_000);
  });

  t.test('Location and Content-Disposition are made here, as the gateway\'s own handlers make them, whatever the upstream sends', async () => {
    for (const [index, location] of [undefined, '/v1/orders/999', '/v1/services/7', 'https://elsewhere.example/v1/orders/42'].entries()) {
      gw.upstream.answer(json(201, ORDER, location === undefined ? {} : { location }));
      const placed = await gw.app.inject({
        method: 'POST',
        url: '/v1/orders',
        headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': `location-${index}` },
        payload: { product_id: '1', billing_cycle: 'monthly' },
      });
      assert.equal(placed.statusCode, 201, placed.body);
      assert.equal(placed.headers.location, `/v1/orders/${ORDER.id}`, String(location));
    }
    for (const disposition of [undefined, 'inline; filename="x.pdf"', 'attachment; filename=../../etc/passwd']) {
      gw.upstream.answer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/pdf', ...(disposition === undefined ? {} : { 'content-disposition': disposition }) });
        response.end('%PDF-1.4 test');
      });
      const pdf = await gw.app.inject({ method: 'GET', url: '/v1/billing/invoices/9/pdf', headers: bearer(gw.keys['acme:all']) });
      assert.equal(pdf.statusCode, 200, pdf.body);
      assert.equal(pdf.headers['content-disposition'], 'attachment; filename="invoice-9.pdf"', String(disposition));
    }
  });

  t.test('an upstream under a path prefix: the contract\'s own Location no longer turns a placed order into a 502', async (t) => {
    const prefixed = await buildPassthroughGateway({ basePath: '/api' });
    t.teardown(() => prefixed.close());
    // The contract's own Location, which does not know the prefix it is served under.
    prefixed.upstream.answer(json(201, ORDER, { location: '/v1/orders/42' }));
    const placed = await prefixed.app.inject({
      method: 'POST',
      url: '/v1/orders',
      headers: { ...bearer(prefixed.keys['acme:all']), 'idempotency-key': 'prefixed-1' },
      payload: { product_id: '1', billing_cycle: 'monthly' },
    });
    assert.equal(placed.statusCode, 201, placed.body);
    assert.equal(placed.headers.location, '/v1/orders/42');
    assert.equal(prefixed.upstream.received[0]?.url, '/api/v1/orders');
  });

  t.test('an order: the validated body, a namespaced Idempotency-Key, Location; the replay is served here', async () => {
    gw.upstream.answer(json(201, ORDER, { location: '/v1/orders/42' }));
    const request = {
      method: 'POST' as const,
      url: '/v1/orders',
      headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': 'client-key-1' },
      payload: { product_id: '1', billing_cycle: 'monthly' },
    };
    const placed = await gw.app.inject(request);
    assert.equal(placed.statusCode, 201, placed.body);
    assert.equal(placed.headers.location, '/v1/orders/42');
    assert.equal(gw.upstream.received.length, 1);
    const sent = gw.upstream.received[0]!;
    assert.deepEqual(JSON.parse(sent.body), { product_id: '1', billing_cycle: 'monthly' });
    assert.match(String(sent.headers['idempotency-key']), /^gw\.[0-9a-f]{64}$/);
    assert.equal(sent.headers['content-type'], 'application/json');

    const replay = await gw.app.inject(request);
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, placed.body);
    assert.equal(gw.upstream.received.length, 1, 'the replay did not reach the upstream');

    // Another account's same client key is another upstream key.
    await gw.app.inject({ ...request, headers: { ...bearer(gw.keys['beta:all']), 'idempotency-key': 'client-key-1' } });
    assert.equal(gw.upstream.received.length, 2);
    assert.notEqual(gw.upstream.received[1]!.headers['idempotency-key'], sent.headers['idempotency-key']);
  });

  t.test('credentials: forwarded, audited here whatever the outcome, never cached', async () => {
    const credentials = { service_id: '7', username: 'root', password: 'pw-123', hostname: 'vps7.example.com', ip_addresses: ['192.0.2.7'] };
    gw.upstream.answer(json(200, credentials));
    const read = await gw.app.inject({ method: 'GET', url: '/v1/services/7/credentials', headers: bearer(gw.keys['acme:all']) });
    assert.equal(read.statusCode, 200, read.body);
    assert.deepEqual(read.json(), credentials);
    assert.equal(read.headers['cache-control'], 'no-store');
    gw.upstream.answer(json(404, {}));
    const failed = await gw.app.inject({ method: 'GET', url: '/v1/services/8/credentials', headers: bearer(gw.keys['acme:all']) });
    assert.equal(failed.statusCode, 502);
    const records = gw.audit.records.filter((record) => [read.headers['x-request-id'], failed.headers['x-request-id']].includes(record.request_id));
    assert.equal(records.length, 2);
    assert.deepEqual(records.map((record) => [record.outcome, record.status, record.account_id]), [['returned', 200, 'acme'], ['failed', 502, 'acme']]);
    assert.ok(!JSON.stringify(gw.audit.records).includes('pw-123'), 'no credential in the audit log');
  });

  t.test('an action outside this gateway\'s profile is refused here and sends nothing', async () => {
    gw.upstream.answer(json(200, {}));
    const response = await gw.app.inject({
      method: 'POST',
      url: '/v1/services/7/actions',
      headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': 'terminate-1' },
      payload: { action: 'terminate' },
    });
    assert.equal(response.statusCode, 422, response.body);
    assert.equal(response.json().reason, 'invalid_action');
    assert.deepEqual(response.json().allowed_actions, ['start', 'stop', 'reboot', 'cancel', 'cancel_revoke']);
    assert.equal(gw.upstream.received.length, 0);
  });

  t.test('the gates run first: no key, a missing scope or a bad body send nothing', async () => {
    gw.upstream.answer(json(200, SERVICE));
    assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/services/7' })).statusCode, 401);
    assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:read:billing']) })).statusCode, 403);
    assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/services/abc', headers: bearer(gw.keys['acme:all']) })).statusCode, 400);
    const order = await gw.app.inject({ method: 'POST', url: '/v1/orders', headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': 'bad-body' }, payload: { product_id: '1', billing_cycle: 'monthly', admin: true } });
    assert.equal(order.statusCode, 400);
    assert.equal(gw.upstream.received.length, 0);
  });

  t.test('an account without an upstream key: 502, nothing sent, the operator told which', async () => {
    const gateway = await buildPassthroughGateway({ v1: { apiKeys: { 'up-acme': UPSTREAM_KEYS['up-acme'] } } });
    try {
      const response = await gateway.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gateway.keys['beta:all']) });
      assert.equal(response.statusCode, 502);
      assert.equal(gateway.upstream.received.length, 0);
      assert.ok(gateway.logs.some((line) => line.includes('no key for upstream id \\"up-beta\\"')));
    } finally {
      await gateway.close();
    }
  });

  t.test('counts upstream calls by backend, action and outcome', async () => {
    gw.upstream.answer(json(200, SERVICE));
    await gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:all']) });
    const text = await gw.app.metrics.registry.metrics();
    assert.match(text, /gateway_upstream_requests_total\{backend="v1",action="getService",outcome="success"\} [1-9]/);
    assert.match(text, /gateway_upstream_request_duration_seconds_count\{backend="v1",action="getService"\} [1-9]/);
  });

  t.test("the own-duration metric leaves out the wait on the upstream: 200 ms an answer here", async () => {
    const service = json(200, SERVICE);
    gw.upstream.answer((request, response, socket) => void setTimeout(() => service(request, response, socket), 200));
    const read = async (name: string, suffix: 'sum' | 'count') => {
      const text = await gw.app.metrics.registry.metrics();
      const line = text.split('\n').find((each) => each.startsWith(`${name}_${suffix}{`) && each.includes('route="/v1/services/:id"') && each.includes('status="200"'));
      return Number(line?.split(' ').at(-1) ?? 0);
    };
    const before = { total: await read('gateway_http_request_duration_seconds', 'sum'), own: await read('gateway_http_request_own_duration_seconds', 'sum'), count: await read('gateway_http_request_own_duration_seconds', 'count') };
    for (let i = 0; i < 2; i++) assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:all']) })).statusCode, 200);
    const total = (await read('gateway_http_request_duration_seconds', 'sum')) - before.total;
    const own = (await read('gateway_http_request_own_duration_seconds', 'sum')) - before.own;
    assert.equal((await read('gateway_http_request_own_duration_seconds', 'count')) - before.count, 2);
    assert.ok(total >= 2 * 0.2, `answered in ${total} s`);
    assert.ok(own >= 0 && own <= total - 2 * 0.2, `own ${own} s of ${total} s: the 2 × 200 ms forwarded are not the gateway's`);
  });

  t.test('health and readiness ask the upstream\'s /v1/health', async () => {
    gw.upstream.answer(json(200, { status: 'ok' }));
    assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/health' })).statusCode, 200);
    assert.equal((await gw.app.readiness.check()).upstream, 'ok');
  });

  t.test('no log line holds an upstream key or a client key', async () => {
    const text = gw.logs.join('');
    for (const key of Object.values(UPSTREAM_KEYS)) assert.ok(!text.includes(key));
    for (const key of Object.values(gw.keys)) assert.ok(!text.includes(key));
  });
});
