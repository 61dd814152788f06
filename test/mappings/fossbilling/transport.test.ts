import assert from 'node:assert/strict';
import t from 'tap';
import { BackendError } from '../../../src/backend/backend.js';
import { CircuitOpenError } from '../../../src/upstream/breaker.js';
import { FossbillingConfigSchema } from '../../../mappings/fossbilling/config.js';
import { declareMethods } from '../../../mappings/fossbilling/methods.js';
import { createFossbillingTransport, FossbillingError, fossbillingProtocol } from '../../../mappings/fossbilling/transport.js';
import { type FossbillingSimulator, startFossbillingSimulator } from '../../../simulators/fossbilling/server.js';
import * as answers from './fixtures/answers.js';

const TOKEN = 'token-secret-value';
const config = (overrides: Record<string, unknown> = {}) =>
  FossbillingConfigSchema.parse({ url: 'http://fossbilling.test', apiToken: TOKEN, circuitBreaker: { enabled: false }, ...overrides });

async function failure(work: Promise<unknown> | (() => unknown)): Promise<BackendError> {
  const error = await (typeof work === 'function' ? Promise.resolve().then(work) : work).then(
    () => assert.fail('expected a failure'),
    (reason: unknown) => reason,
  );
  assert.ok(error instanceof BackendError, `expected a BackendError, got ${String(error)}`);
  return error;
}

t.test('FOSSBilling protocol on envelopes built from ApiResponseFactory.php', async (t) => {
  const protocol = fossbillingProtocol(config());
  const actions = declareMethods(config());
  const reply = (statusCode: number, body: unknown, headers: Record<string, string> = {}) => ({
    statusCode,
    headers,
    body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
  });

  t.test('POSTs JSON to /api/admin/<module>/<method> with Basic admin:<token>', async () => {
    const request = protocol.request(actions['order/get'], { id: 7 });
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/api/admin/order/get');
    assert.equal(request.headers.authorization, `Basic ${Buffer.from(`admin:${TOKEN}`).toString('base64')}`);
    assert.equal(request.body, '{"id":7}');
    // English error messages on any install: the mapping's rules read some by their text.
    assert.equal(request.headers['accept-language'], 'en-US');
    assert.equal(request.headers.cookie, 'fossbilling_locale=en_US; BBLANG=en_US');
  });

  t.test('answers the result, null included (order/service without a service)', async () => {
    assert.equal(protocol.read(actions['order/create'], reply(200, answers.envelope.ok(7))), 7);
    assert.equal(protocol.read(actions['order/service'], reply(200, answers.envelope.ok(null))), null);
  });

  t.test('reads an error inside HTTP 200 as a coded FossbillingError', async () => {
    const error = await failure(() => protocol.read(actions['order/get'], reply(200, answers.envelope.error(answers.messages.orderNotFound, 9999))));
    assert.ok(error instanceof FossbillingError);
    assert.equal(error.code, 9999);
    assert.equal(error.upstreamMessage, 'Order Not Found');
    assert.equal(error.detail, 'The billing system reported an error.');
  });

  t.test('an error message that echoes the token, as sent or HTML-escaped, keeps it out of upstreamMessage (rules quote it)', async () => {
    const echoed = protocol.read.bind(protocol, actions['order/get']);
    const tokenWithAmp = fossbillingProtocol(config({ apiToken: 'tok&en-secret' }));
    for (const [read, message] of [
      [echoed, `Invalid token ${TOKEN}`],
      [tokenWithAmp.read.bind(tokenWithAmp, actions['order/get']), 'Invalid token tok&amp;en-secret'],
    ] as const) {
      const error = await failure(() => read(reply(200, answers.envelope.error(message, 9999))));
      assert.ok(error instanceof FossbillingError);
      assert.equal(error.upstreamMessage, 'Invalid token [redacted]');
      assert.doesNotMatch(error.operatorMessage ?? '', /secret/);
    }
  });

  t.test('keeps code 740 (HTTP 404) for the mapping, which tells the operator the method is missing', async () => {
    const error = await failure(() => protocol.read(actions['order/get'], reply(404, answers.envelope.error(answers.messages.noSuchMethod, 740))));
    assert.ok(error instanceof FossbillingError);
    assert.equal(error.code, 740);
  });

  t.test('reports every authentication code as a refusal for the operator, without the token', async () => {
    for (const code of [201, 202, 203, 204, 205, 206, 1002, 1004]) {
      const error = await failure(() => protocol.read(actions['client/get'], reply(401, answers.envelope.error(`${answers.messages.authFailed} ${TOKEN}`, code))));
      assert.equal(error.kind, 'upstream_error');
      assert.equal(error.detail, 'The billing system refused the gateway.');
      assert.match(error.operatorMessage ?? '', new RegExp(`error ${code}`));
      assert.equal((error.operatorMessage ?? '').includes(TOKEN), false);
    }
  });

  t.test('maps 429 to unavailable with FOSSBilling\'s Retry-After, and 503 to unavailable', async () => {
    const limited = await failure(() => protocol.read(actions['client/get'], reply(429, answers.envelope.error(answers.messages.rateLimited, 429), { 'retry-after': '17' })));
    assert.equal(limited.kind, 'unavailable');
    assert.equal(limited.retryAfterMs, 17_000);
    const closed = await failure(() => protocol.read(actions['client/get'], reply(503, answers.envelope.error('FOSSBilling update finalization is pending.', 503))));
    assert.equal(closed.kind, 'unavailable');
  });

  t.test('accepts string codes (PDOException SQLSTATE) as ordinary errors', async () => {
    const error = await failure(() => protocol.read(actions['order/get'], reply(200, answers.envelope.error('SQLSTATE[HY000]', 'HY000' as unknown as number))));
    assert.ok(error instanceof FossbillingError);
    assert.equal(error.code, 'HY000');
  });

  t.test('refuses a body that is not an envelope; from a write after a 5xx the outcome is unknown', async () => {
    const html = await failure(() => protocol.read(actions['client/get'], reply(200, '<html>Maintenance</html>')));
    assert.equal(html.kind, 'upstream_error');
    assert.equal(html.outcomeUnknown, false);
    const crashed = await failure(() => protocol.read(actions['order/create'], reply(500, '<html>Fatal error</html>')));
    assert.equal(crashed.outcomeUnknown, true);
  });

  t.test('a JSON `error` with a 500, 502 or 504 is no envelope (FOSSBilling sends none with them): after a write the outcome is unknown', async () => {
    // A proxy's page ({"error": "Gateway Timeout"}, a Google-style {"error": {code, message}}) or a fatal error's.
    const bodies = [
      [504, { error: 'Gateway Timeout' }],
      [502, { error: { code: 502, message: 'upstream connection reset' } }],
      [500, { result: null, error: { message: 'Call to a member function on null', code: 9999 } }],
    ] as const;
    for (const [statusCode, body] of bodies) {
      const error = await failure(() => protocol.read(actions['order/create'], reply(statusCode, body, { 'content-type': 'application/json' })));
      assert.equal(error instanceof FossbillingError, false, `HTTP ${statusCode}: not FOSSBilling's own refusal`);
      assert.equal(error.outcomeUnknown, true, `HTTP ${statusCode}: the write may have run`);
    }
  });
});

t.test('FOSSBilling transport against the simulator', async (t) => {
  let sim: FossbillingSimulator;
  let transport: ReturnType<typeof createFossbillingTransport>;
  t.before(async () => {
    sim = await startFossbillingSimulator();
    transport = createFossbillingTransport(config({ url: sim.url, apiToken: sim.apiToken, methodTimeoutsMs: { 'order/suspend': 300 } }));
  });
  t.teardown(async () => {
    await transport.close();
    await sim.close();
  });
  t.beforeEach(() => {
    sim.clearFaults();
    sim.calls.length = 0;
    for (const order of sim.state.orders) if (order.id === 1) order.status = 'active';
  });

  t.test('sends the call and answers the result', async () => {
    const result = (await transport.call('client/get', { id: 1 })) as { email: string };
    assert.equal(result.email, 'ada@example.com');
    assert.deepEqual(sim.calls, [{ method: 'client/get', params: { id: 1 } }]);
  });

  t.test('reports a refused token for the operator', async () => {
    const wrong = createFossbillingTransport(config({ url: sim.url, apiToken: 'wrong-token-value' }));
    try {
      const error = await failure(wrong.call('client/get', { id: 1 }));
      assert.equal(error.detail, 'The billing system refused the gateway.');
      assert.match(error.operatorMessage ?? '', /error 204/);
    } finally {
      await wrong.close();
    }
  });

  t.test('reports a missing staff permission (403) for the operator', async () => {
    const denied = await startFossbillingSimulator({ deniedMethods: ['invoice/get_list'] });
    const limited = createFossbillingTransport(config({ url: denied.url, apiToken: denied.apiToken }));
    try {
      const error = await failure(limited.call('invoice/get_list', { client_id: 1 }));
      assert.equal(error.detail, 'The billing system refused the gateway.');
      assert.match(error.operatorMessage ?? '', /error 403.*permission/);
    } finally {
      await limited.close();
      await denied.close();
    }
  });

  t.test('passes the simulator\'s rate limit on with its Retry-After', async () => {
    sim.inject({ kind: 'rate_limited', retryAfterSeconds: 17, times: 1 });
    const error = await failure(transport.call('client/get', { id: 1 }));
    assert.equal(error.kind, 'unavailable');
    assert.equal(error.retryAfterMs, 17_000);
  });

  t.test('a write cut off after it acted has an unknown outcome', async () => {
    sim.inject({ kind: 'malformed', method: 'order/suspend', times: 1 });
    const error = await failure(transport.call('order/suspend', { id: 1 }));
    assert.equal(error.outcomeUnknown, true);
    assert.equal(sim.state.orders.find((order) => order.id === 1)?.status, 'suspended');
  });

  t.test('times out a hanging write, with an unknown outcome', async () => {
    sim.inject({ kind: 'hang', times: 1 });
    const error = await failure(transport.call('order/suspend', { id: 1 }));
    assert.equal(error.kind, 'timeout');
    assert.equal(error.outcomeUnknown, true);
  });

  t.test('a reset after sending breaks the write, with an unknown outcome', async () => {
    sim.inject({ kind: 'reset', times: 1 });
    const error = await failure(transport.call('order/suspend', { id: 1 }));
    assert.equal(error.kind, 'upstream_error');
    assert.equal(error.outcomeUnknown, true);
  });

  t.test('nothing listening is unavailable, and nothing was sent', async () => {
    const gone = await startFossbillingSimulator();
    const url = gone.url;
    await gone.close();
    const dead = createFossbillingTransport(config({ url, apiToken: 'x-token' }));
    try {
      const error = await failure(dead.call('order/create', {}));
      assert.equal(error.kind, 'unavailable');
      assert.equal(error.outcomeUnknown, false);
    } finally {
      await dead.close();
    }
  });

  t.test('coalesces identical concurrent reads and caches the catalog', async () => {
    await Promise.all([transport.call('product/get_list', { page: 1 }), transport.call('product/get_list', { page: 1 })]);
    await transport.call('product/get_list', { page: 1 });
    assert.equal(sim.calls.length, 1);
  });

  t.test('opens the circuit breaker after repeated failures: later calls are refused without being sent', async () => {
    const guarded = createFossbillingTransport(
      config({ url: sim.url, apiToken: sim.apiToken, methodTimeoutsMs: { 'client/get': 200 }, circuitBreaker: { failureThreshold: 2, openMs: 60_000 } }),
    );
    try {
      sim.inject({ kind: 'hang', method: 'client/get', times: 2 });
      await failure(guarded.call('client/get', { id: 1 }));
      await failure(guarded.call('client/get', { id: 2 }));
      const sent = sim.calls.length;
      const error = await failure(guarded.call('client/get', { id: 3 }));
      assert.ok(error instanceof CircuitOpenError);
      assert.equal(sim.calls.length, sent);
    } finally {
      await guarded.close();
    }
  });
});
