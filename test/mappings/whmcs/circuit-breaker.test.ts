/**
 * The WHMCS client's circuit breaker, against the scripted WHMCS (and real sockets for what the mock
 * cannot do), on an injected clock.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import t from 'tap';
import { createWhmcsBackend } from '../../../mappings/whmcs/backend.js';
import { TRIAL_RETRY_AFTER_MS } from '../../../src/upstream/breaker.js';
import { CircuitOpenError, createWhmcsClient, type WhmcsClient } from '../../../mappings/whmcs/client.js';
import { WhmcsConfigSchema } from '../../../mappings/whmcs/config.js';
import { CREDENTIALS, FakeWhmcs, type LogLine, rejectsWith, testConfig } from './fake-whmcs.js';
import * as answers from './fixtures/answers.js';

const OPEN_MS = 10_000;
const THRESHOLD = 3;

/** Rejected by the breaker itself: unavailable, nothing sent, with the Retry-After hint. */
async function failsFast(work: Promise<unknown>, retryAfterMs: number): Promise<void> {
  const error = await rejectsWith(work, 'unavailable');
  assert.ok(error instanceof CircuitOpenError, `expected a CircuitOpenError, got ${error.name}: ${error.operatorMessage ?? ''}`);
  assert.equal(error.outcomeUnknown, false);
  assert.equal(error.retryAfterMs, retryAfterMs);
  assert.equal(error.operatorMessage, undefined, 'each refusal is not worth a log line of its own');
}

function assertNoCredentials(lines: readonly LogLine[]): void {
  const text = JSON.stringify(lines);
  for (const secret of Object.values(CREDENTIALS)) {
    assert.ok(!text.includes(secret) && !text.includes(encodeURIComponent(secret)), 'a log line leaks a credential');
  }
}

t.test('WHMCS circuit breaker', async (t) => {
  let whmcs: FakeWhmcs;
  let clock: number;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
    clock = 1_700_000_000_000;
  });
  t.afterEach(() => whmcs.close());

  const client = (overrides: Record<string, unknown> = {}, breaker: Record<string, unknown> = {}): WhmcsClient =>
    createWhmcsClient(testConfig({ ...overrides, circuitBreaker: { failureThreshold: THRESHOLD, openMs: OPEN_MS, ...breaker } }), {
      dispatcher: whmcs.agent,
      logger: whmcs.logger,
      now: () => clock,
    });
  const logged = (pattern: RegExp): LogLine[] => whmcs.logs.filter((line) => pattern.test(line.msg));
  const openings = (): LogLine[] => logged(/circuit breaker (re-)?opened/);

  /** Opens the breaker with refused GetInvoices calls (each read is tried twice, both refused). */
  async function open(c: WhmcsClient, times = THRESHOLD): Promise<void> {
    whmcs.refuse('GetInvoices');
    for (let page = 0; page < times; page += 1) await rejectsWith(c.call('GetInvoices', { limitstart: page }), 'unavailable');
  }

  t.test('opens after N consecutive down-failures, logs it once with the count and the last kind, then fails fast', async () => {
    const c = client();
    await open(c, THRESHOLD - 1);
    assert.equal(openings().length, 0, 'not before the threshold');
    await open(c, 1);
    const [line, ...more] = openings();
    assert.ok(line);
    assert.equal(more.length, 0);
    assert.equal(line.level, 'error');
    assert.deepEqual({ ...line.obj, lastError: undefined }, { failures: THRESHOLD, lastFailure: 'unavailable', lastError: undefined, openMs: OPEN_MS });
    assert.match(String((line.obj as { lastError: unknown }).lastError), /ECONNREFUSED/);

    whmcs.answer('GetClientsDetails', answers.clientDetails);
    const sent = whmcs.requests().length;
    await failsFast(c.call('GetClientsDetails', { clientid: '1' }), OPEN_MS);
    clock += 4_000;
    await failsFast(c.call('GetClientsDetails', { clientid: '1' }), OPEN_MS - 4_000);
    await failsFast(c.call('GetInvoices', { limitstart: 0 }), OPEN_MS - 4_000);
    assert.equal(whmcs.requests().length, sent, 'nothing reached WHMCS while open');
    assert.equal(openings().length, 1, 'logged once');
    assertNoCredentials(whmcs.logs);
  });

  t.test('counts timeouts and proxy answers that say WHMCS is down or overloaded (429, 502, 503, 504)', async () => {
    const c = client({ actionTimeoutsMs: { GetOrders: 20 } }, { failureThreshold: 6 });
    whmcs.answer('GetOrders', answers.orders, { delayMs: 300 });
    await rejectsWith(c.call('GetOrders', {}), 'timeout');
    for (const status of [429, 502, 503, 504]) {
      whmcs.answer('GetInvoices', '<html><h1>Bad Gateway</h1></html>', { status, times: 1 });
      // A proxy's 504 is the gateway's own timeout (upstream_timeout): WHMCS did not answer in time.
      const kind = status === 429 || status === 503 ? 'unavailable' : status === 504 ? 'timeout' : 'upstream_error';
      await rejectsWith(c.call('GetInvoices', { status }), kind);
    }
    assert.equal(openings().length, 0);
    await rejectsWith(c.call('GetOrders', { again: 1 }), 'timeout');
    const [line] = openings();
    assert.equal((line?.obj as { failures?: number; lastFailure?: string }).failures, 6);
    assert.equal((line?.obj as { lastFailure?: string }).lastFailure, 'timeout');
    await failsFast(c.call('GetOrders', {}), OPEN_MS);
  });

  t.test('does not count business errors, 403s, 500s or unreadable answers', async () => {
    whmcs
      .answer('GetClientsDetails', answers.clientNotFound)
      .answer('AddOrder', answers.refusals.ip, { status: 403 })
      .answer('GetProducts', '<html><h1>Fatal error</h1></html>', { status: 500 })
      .answer('GetOrders', '<html>Down for maintenance</html>');
    const c = client({}, { failureThreshold: 1 });
    for (let round = 0; round < 3; round += 1) {
      await rejectsWith(c.call('GetClientsDetails', { clientid: '9' }), 'upstream_error');
      await rejectsWith(c.call('AddOrder', {}), 'upstream_error');
      await rejectsWith(c.call('GetProducts'), 'upstream_error');
      await rejectsWith(c.call('GetOrders', {}), 'upstream_error');
    }
    assert.equal(openings().length, 0);
    assert.equal(whmcs.requests().length, 12, 'every call was sent');
  });

  t.test('counts only consecutive failures: any answer resets the count', async () => {
    whmcs.answer('GetClientsDetails', answers.clientNotFound).answer('GetOrders', answers.orders);
    const c = client({}, { failureThreshold: 2 });
    await open(c, 1);
    await rejectsWith(c.call('GetClientsDetails', { clientid: '9' }), 'upstream_error');
    await open(c, 1);
    await c.call('GetOrders', {});
    await open(c, 1);
    assert.equal(openings().length, 0, 'never two in a row');
    await open(c, 1);
    assert.equal(openings().length, 1);
  });

  t.test('rejects writes while open without sending them: their outcome is known (not run)', async () => {
    whmcs.answer('AddOrder', answers.addOrder).answer('ModuleCustom', answers.moduleSuccess);
    const c = client();
    await open(c);
    await failsFast(c.call('AddOrder', { clientid: '1' }), OPEN_MS);
    await failsFast(c.call('ModuleCustom', { serviceid: '1', func_name: 'reboot' }), OPEN_MS);
    assert.equal(whmcs.requests('AddOrder').length, 0);
    assert.equal(whmcs.requests('ModuleCustom').length, 0);
  });

  t.test('half-open: exactly one trial goes through while concurrent callers fail fast; its answer closes the breaker', async () => {
    whmcs
      .answer('GetOrders', answers.orders, { delayMs: 50 })
      .answer('GetClientsDetails', answers.clientDetails)
      .answer('AddOrder', answers.addOrder);
    const c = client();
    await open(c);
    clock += OPEN_MS - 1;
    await failsFast(c.call('GetOrders', {}), 1);
    clock += 1;

    const trial = c.call('GetOrders', { clientid: '1' });
    await Promise.all([
      failsFast(c.call('GetOrders', { clientid: '2' }), TRIAL_RETRY_AFTER_MS),
      failsFast(c.call('GetClientsDetails', { clientid: '1' }), TRIAL_RETRY_AFTER_MS),
      failsFast(c.call('AddOrder', { clientid: '1' }), TRIAL_RETRY_AFTER_MS),
    ]);
    assert.equal((await trial).result, 'success');
    assert.equal(whmcs.requests('GetOrders').length, 1, 'only the trial was sent');
    assert.equal(whmcs.requests('GetClientsDetails').length + whmcs.requests('AddOrder').length, 0);

    const halfOpen = logged(/half-open/);
    assert.equal(halfOpen.length, 1);
    assert.equal(halfOpen[0]?.level, 'warn');
    const closed = logged(/closed/);
    assert.equal(closed.length, 1);
    assert.equal(closed[0]?.level, 'info');
    assert.deepEqual(closed[0]?.obj, { action: 'GetOrders', failures: THRESHOLD });

    await c.call('GetClientsDetails', { clientid: '1' });
    await c.call('AddOrder', { clientid: '1' });
    assert.equal(whmcs.requests('AddOrder').length, 1, 'closed: calls go through again');
    assertNoCredentials(whmcs.logs);
  });

  t.test('a failed trial re-opens the breaker for another openMs', async () => {
    const c = client();
    await open(c);
    clock += OPEN_MS;
    const trial = await rejectsWith(c.call('GetInvoices', { limitstart: 0 }), 'unavailable');
    assert.ok(!(trial instanceof CircuitOpenError), 'the trial itself was sent and refused');
    const [first, again, ...more] = openings();
    assert.equal(more.length, 0);
    assert.equal(first?.level, 'error');
    assert.equal(again?.level, 'error');
    assert.match(again?.msg ?? '', /re-opened/);
    assert.equal((again?.obj as { failures?: number }).failures, THRESHOLD + 1);

    const sent = whmcs.requests().length;
    await failsFast(c.call('GetInvoices', { limitstart: 0 }), OPEN_MS);
    clock += OPEN_MS - 1;
    await failsFast(c.call('GetInvoices', { limitstart: 0 }), 1);
    assert.equal(whmcs.requests().length, sent);
    clock += 1;
    await rejectsWith(c.call('GetInvoices', { limitstart: 0 }), 'unavailable');
    assert.equal(whmcs.requests().length, sent + 2, 'the next trial (a read: tried twice) after another openMs');
  });

  t.test('a write that would be the trial waits for a health probe, and is sent only once WHMCS answered it', async () => {
    whmcs.refuse('GetCurrencies', { times: 1 }).answer('GetCurrencies', answers.currencies).answer('AddOrder', answers.addOrder);
    const c = client();
    await open(c);

    clock += OPEN_MS;
    await failsFast(c.call('AddOrder', { clientid: '1' }), OPEN_MS);
    assert.equal(whmcs.requests('GetCurrencies').length, 1, 'the probe was the trial');
    assert.equal(whmcs.requests('AddOrder').length, 0, 'the write never left');
    assert.equal(openings().length, 2);

    clock += OPEN_MS;
    assert.equal((await c.call('AddOrder', { clientid: '1' })).result, 'success');
    assert.deepEqual(whmcs.actions().slice(-2), ['GetCurrencies', 'AddOrder']);
    assert.equal(logged(/closed/).length, 1);
  });

  t.test('results of calls admitted before a state change do not count after it', async () => {
    whmcs
      .answer('GetOrders', answers.orders, { delayMs: 150 })
      .answer('GetClientsDetails', answers.clientDetails, { delayMs: 1_000 })
      .answer('GetCurrencies', answers.currencies);
    const c = client({ actionTimeoutsMs: { GetClientsDetails: 300 } });
    const slowAnswer = c.call('GetOrders', {});
    const slowFailure = rejectsWith(c.call('GetClientsDetails', { clientid: '1' }), 'timeout');
    await open(c);
    assert.equal(openings().length, 1);
    assert.equal((await slowAnswer).result, 'success');
    await failsFast(c.call('GetOrders', {}), OPEN_MS);
    clock += OPEN_MS;
    await c.call('GetCurrencies');
    assert.equal(logged(/closed/).length, 1);
    await slowFailure;
    await open(c, THRESHOLD - 1);
    assert.equal(openings().length, 1, 'the timeout of a call from before counts in no later period');

    // Many concurrent failures past the threshold open it once.
    const burst = client({}, { failureThreshold: 2 });
    await Promise.all([0, 1, 2, 3, 4].map((page) => rejectsWith(burst.call('GetInvoices', { burst: page }), 'unavailable')));
    assert.equal(openings().length, 2, 'one more opening, for the second client');
  });

  t.test('keeps serving stale cached answers while open, without a warning per call', async () => {
    whmcs.answer('GetProducts', answers.catalog, { times: 1 });
    const c = client({ productCacheTtlMs: 10 });
    const first = await c.call('GetProducts');
    await open(c);
    clock += 25;
    for (let i = 0; i < 3; i += 1) assert.equal(await c.call('GetProducts'), first);
    // The refreshes the stale reads start are refused by the breaker at once, before any request.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(whmcs.requests('GetProducts').length, 1);
    assert.equal(logged(/serving the cached answer/).length, 0);
  });

  t.test('backend ping: false while open without asking WHMCS, and the trial in half-open', async () => {
    whmcs.refuse('GetCurrencies', { times: THRESHOLD }).answer('GetCurrencies', answers.currencies);
    const backend = createWhmcsBackend(testConfig({ circuitBreaker: { failureThreshold: THRESHOLD, openMs: OPEN_MS } }), {
      dispatcher: whmcs.agent,
      logger: whmcs.logger,
      now: () => clock,
    });
    for (let i = 0; i < THRESHOLD; i += 1) assert.equal(await backend.ping(), false);
    assert.equal(openings().length, 1);
    assert.equal(await backend.ping(), false, 'WHMCS answers again, but the breaker is open');
    assert.equal(whmcs.requests('GetCurrencies').length, THRESHOLD);
    clock += OPEN_MS;
    assert.equal(await backend.ping(), true);
    assert.equal(whmcs.requests('GetCurrencies').length, THRESHOLD + 1);
    assert.equal(logged(/closed/).length, 1);
    await backend.close();
  });

  t.test('when disabled, never opens', async () => {
    const c = client({}, { enabled: false, failureThreshold: 1 });
    await open(c, 5);
    assert.equal(openings().length, 0);
    assert.equal(whmcs.requests('GetInvoices').length, 10);
  });

  t.test('config: defaults, and strict', async () => {
    const minimal = { url: 'https://billing.example.com', identifier: 'id', secret: 'secret' };
    assert.deepEqual(WhmcsConfigSchema.parse(minimal).circuitBreaker, { enabled: true, failureThreshold: 5, openMs: 10_000 });
    assert.deepEqual(WhmcsConfigSchema.parse({ ...minimal, circuitBreaker: { openMs: 500 } }).circuitBreaker, {
      enabled: true,
      failureThreshold: 5,
      openMs: 500,
    });
    assert.equal(WhmcsConfigSchema.safeParse({ ...minimal, circuitBreaker: { threshold: 2 } }).success, false);
    assert.equal(WhmcsConfigSchema.safeParse({ ...minimal, circuitBreaker: { failureThreshold: 0 } }).success, false);
    assert.equal(WhmcsConfigSchema.safeParse({ ...minimal, circuitBreaker: { openMs: -1 } }).success, false);
  });
});

t.test('WHMCS circuit breaker: real connections', async (t) => {
  async function listen(server: Server): Promise<number> {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    assert.ok(address && typeof address === 'object');
    return address.port;
  }
  const stop = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

  t.test('a closed port: after N refused calls, the next fails fast', async () => {
    const server = createServer();
    const port = await listen(server);
    await stop(server);
    const client = createWhmcsClient(testConfig({ url: `http://127.0.0.1:${port}`, circuitBreaker: { failureThreshold: 2 } }));
    try {
      await rejectsWith(client.call('GetOrders', {}), 'unavailable');
      await rejectsWith(client.call('AddOrder', {}), 'unavailable');
      const error = await rejectsWith(client.call('AddOrder', {}), 'unavailable');
      assert.ok(error instanceof CircuitOpenError);
      assert.equal(error.outcomeUnknown, false);
    } finally {
      await client.close();
    }
  });

  t.test('connections broken after sending count; the write that would be next is never sent', async () => {
    let received = 0;
    const server = createServer((socket) => {
      socket.once('data', () => {
        received += 1;
        socket.destroy();
      });
    });
    const port = await listen(server);
    const client = createWhmcsClient(testConfig({ url: `http://127.0.0.1:${port}`, circuitBreaker: { failureThreshold: 2 } }));
    try {
      assert.equal((await rejectsWith(client.call('ModuleTerminate', { serviceid: '1' }), 'upstream_error')).outcomeUnknown, true);
      await rejectsWith(client.call('GetClientsProducts', { clientid: '1' }), 'upstream_error');
      assert.equal(received, 3, 'the write once; the read, broken before any answer, and its one retry');
      const error = await rejectsWith(client.call('ModuleTerminate', { serviceid: '1' }), 'unavailable');
      assert.ok(error instanceof CircuitOpenError);
      assert.equal(error.outcomeUnknown, false);
      assert.equal(received, 3, 'the second write never sent');
    } finally {
      await client.close();
      await stop(server);
    }
  });
});
