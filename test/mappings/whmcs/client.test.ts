import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { createWhmcsClient, encodeForm, UpstreamBusinessError } from '../../../mappings/whmcs/client.js';
import { CREDENTIALS, FakeWhmcs, SERVICE_PASSWORD, rejectsWith, testConfig } from './fake-whmcs.js';
import * as answers from './fixtures/answers.js';

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address && typeof address === 'object');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return address.port;
}

t.test('WHMCS client: encoding', async (t) => {
  t.test('form-encodes PHP arrays with indexes, booleans as 1/0, and skips undefined', async () => {
    assert.equal(
      encodeForm({ pid: ['1', 2], noemail: true, noinvoice: false, reason: 'A & B=c', skipped: undefined }),
      'pid[0]=1&pid[1]=2&noemail=1&noinvoice=0&reason=A%20%26%20B%3Dc',
    );
  });
});

/** Waits (bounded) for what the client does in the background, such as a stale answer's refresh. */
async function until(done: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let turn = 0; turn < 1_000 && !(await done()); turn += 1) await sleep(5);
  assert.ok(await done(), what);
}

t.test('WHMCS client: requests and answers', async (t) => {
  let whmcs: FakeWhmcs;
  /** The answer cache's (and breaker's) clock: cache ages pass only when a test moves it. */
  let clock: number;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
    clock = 1_700_000_000_000;
  });
  t.afterEach(() => whmcs.close());

  const client = (overrides: Record<string, unknown> = {}) =>
    createWhmcsClient(testConfig(overrides), { dispatcher: whmcs.agent, logger: whmcs.logger, now: () => clock });

  t.test('POSTs the action, responsetype=json and the credentials in the body, never in the URL', async () => {
    whmcs.answer('GetClientsDetails', answers.clientDetails);
    await client().call('GetClientsDetails', { clientid: '1' });
    const [call] = whmcs.agent.getCallHistory()?.calls() ?? [];
    assert.ok(call);
    assert.equal(call.method, 'POST');
    assert.equal(call.fullUrl, `https://billing.example.test/whmcs/includes/api.php`);
    assert.equal((call.headers as Record<string, string>)['content-type'], 'application/x-www-form-urlencoded');
    const params = new URLSearchParams(String(call.body));
    assert.equal(params.get('action'), 'GetClientsDetails');
    assert.equal(params.get('responsetype'), 'json');
    assert.equal(params.get('clientid'), '1');
    assert.equal(params.get('identifier'), CREDENTIALS.identifier);
    assert.equal(params.get('secret'), CREDENTIALS.secret);
    assert.equal(params.get('accesskey'), CREDENTIALS.accessKey);
  });

  t.test('HTTP 403: an upstream error whose WHMCS text goes to the operator only', async () => {
    whmcs.answer('AddOrder', answers.refusals.ip, { status: 403 });
    const error = await rejectsWith(client().call('AddOrder', {}), 'upstream_error');
    assert.equal(error.operatorMessage, 'WHMCS refused the gateway: Invalid IP 203.0.113.7');
    assert.ok(!error.detail.includes('Invalid IP'));
    assert.equal(error.outcomeUnknown, false, 'refused before the action ran');
  });

  t.test('HTTP 403 that echoes a credential is redacted', async () => {
    whmcs.answer('GetClientsDetails', { result: 'error', message: `Invalid identifier ${CREDENTIALS.identifier}` }, { status: 403 });
    const error = await rejectsWith(client().call('GetClientsDetails', {}), 'upstream_error');
    assert.equal(error.operatorMessage, 'WHMCS refused the gateway: Invalid identifier [redacted]');
  });

  t.test('result "error" with HTTP 200: an UpstreamBusinessError carrying the message', async () => {
    whmcs.answer('GetClientsDetails', answers.clientNotFound);
    const error = await rejectsWith(client().call('GetClientsDetails', { clientid: '99' }), 'upstream_error');
    assert.ok(error instanceof UpstreamBusinessError);
    assert.equal(error.upstreamMessage, 'Client Not Found');
    assert.ok(!error.detail.includes('Client Not Found'));
  });

  t.test('status "error" (the GetInvoice quirk) is an error too', async () => {
    whmcs.answer('GetInvoice', answers.invoiceNotFound);
    const error = await rejectsWith(client().call('GetInvoice', { invoiceid: '5' }), 'upstream_error');
    assert.ok(error instanceof UpstreamBusinessError);
    assert.equal(error.upstreamMessage, 'Invoice ID Not Found');
  });

  for (const [name, body] of [
    ['an HTML page', '<html><body><h1>Database error</h1></body></html>'],
    ['truncated JSON', '{"result":"success","products":{"product":[{"pid":1'],
    ['JSON that is an array', '[1,2,3]'],
    ['a JSON string', '"success"'],
    ['JSON without result', '{"products":[]}'],
    ['the NVP text format', 'result=success;clientid=1;'],
  ] as const) {
    t.test(`${name} is an upstream error (outcome unknown only for writes)`, async () => {
      whmcs.answer('GetClientsDetails', body).answer('ModuleSuspend', body);
      const read = await rejectsWith(client().call('GetClientsDetails', {}), 'upstream_error');
      assert.equal(read.outcomeUnknown, false);
      const write = await rejectsWith(client().call('ModuleSuspend', { serviceid: '1' }), 'upstream_error');
      assert.equal(write.outcomeUnknown, true, 'a write answered unreadably may have run');
    });
  }

  t.test('an HTML error page that echoes the request is redacted in the operator message', async () => {
    whmcs.answer('GetClientsDetails', `<pre>POST identifier=${CREDENTIALS.identifier}&secret=${encodeURIComponent(CREDENTIALS.secret)}</pre>`);
    const error = await rejectsWith(client().call('GetClientsDetails', {}), 'upstream_error');
    assert.match(error.operatorMessage ?? '', /\[redacted\]/);
  });

  t.test('an echo HTML-escaped or PHP-urlencoded is redacted too; a business error\'s message is kept redacted', async () => {
    const html = CREDENTIALS.secret.replace(/&/g, '&amp;');
    const php = encodeURIComponent(CREDENTIALS.secret).replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    whmcs.answer('GetClientsDetails', `<p>secret=${html} again=${php}</p>`);
    const error = await rejectsWith(client().call('GetClientsDetails', {}), 'upstream_error');
    assert.equal(error.operatorMessage?.includes(html) || error.operatorMessage?.includes(php), false, error.operatorMessage);
    // Rules quote upstreamMessage to the operator (moduleFunctions, the payment gateway, the doctor).
    whmcs.answer('ModuleCustom', { result: 'error', message: `Function not found for ${CREDENTIALS.accessKey}` });
    const business = await rejectsWith(client().call('ModuleCustom', { serviceid: '1', func_name: 'x' }), 'upstream_error');
    assert.ok(business instanceof UpstreamBusinessError);
    assert.equal(business.upstreamMessage, 'Function not found for [redacted]');
  });

  t.test('a truncated answer is never quoted: it may hold a service password', async () => {
    whmcs.answer('GetClientsProducts', `{"result":"success","products":{"product":[{"id":"1","password":"${SERVICE_PASSWORD}"`);
    const error = await rejectsWith(client().call('GetClientsProducts', { clientid: '1' }), 'upstream_error');
    assert.match(error.operatorMessage ?? '', /bytes of JSON-like text/);
  });

  t.test('other non-2xx answers are upstream errors; a 5xx to a write leaves its outcome unknown', async () => {
    whmcs.answer('GetOrders', 'Not Found', { status: 404 }).answer('AddOrder', '<h1>500</h1>', { status: 500 });
    const read = await rejectsWith(client().call('GetOrders', {}), 'upstream_error');
    assert.match(read.operatorMessage ?? '', /HTTP 404/);
    const write = await rejectsWith(client().call('AddOrder', {}), 'upstream_error');
    assert.equal(write.outcomeUnknown, true);
  });

  t.test('refuses an answer larger than the limit (5 MiB unless maxResponseBytes says more), naming the setting', async () => {
    const huge = JSON.stringify({ result: 'success', padding: 'x'.repeat(5 * 1024 * 1024) });
    whmcs.answer('GetProducts', huge);
    const error = await rejectsWith(client().call('GetProducts', {}), 'upstream_error');
    assert.match(error.operatorMessage ?? '', /larger than 5242880 bytes \(maxResponseBytes\)/);
    whmcs.answer('GetProducts', huge);
    assert.equal((await client({ maxResponseBytes: 8 * 1024 * 1024 }).call('GetProducts', {})).result, 'success', 'a large catalog is read under a raised cap');
  });

  t.test('a timeout after sending: outcome unknown for a write, not for a read', async () => {
    whmcs.answer('AddOrder', answers.addOrder, { delayMs: 500 }).answer('GetClientsDetails', answers.clientDetails, { delayMs: 500 });
    const fast = client({ actionTimeoutsMs: { AddOrder: 40, GetClientsDetails: 40 } });
    const write = await rejectsWith(fast.call('AddOrder', {}), 'timeout');
    assert.equal(write.outcomeUnknown, true);
    const read = await rejectsWith(fast.call('GetClientsDetails', {}), 'timeout');
    assert.equal(read.outcomeUnknown, false);
  });

  t.test('a read that failed before sending is retried once; a write never is', async () => {
    whmcs.refuse('GetClientsDetails', { times: 1 }).answer('GetClientsDetails', answers.clientDetails);
    const answer = await client().call('GetClientsDetails', { clientid: '1' });
    assert.equal(answer.result, 'success');
    assert.equal(whmcs.requests('GetClientsDetails').length, 2);
    assert.ok(whmcs.logs.some((line) => line.level === 'warn' && /retrying once/.test(line.msg)));

    whmcs.refuse('AddOrder', { times: 1 }).answer('AddOrder', answers.addOrder);
    const error = await rejectsWith(client().call('AddOrder', {}), 'unavailable');
    assert.equal(error.outcomeUnknown, false);
    assert.equal(whmcs.requests('AddOrder').length, 1, 'a write is never retried');
  });

  t.test('a read refused twice before sending is unavailable', async () => {
    whmcs.refuse('GetOrders');
    const error = await rejectsWith(client().call('GetOrders', {}), 'unavailable');
    assert.equal(error.outcomeUnknown, false);
    assert.equal(whmcs.requests('GetOrders').length, 2);
  });

  t.test('identical concurrent reads share one request; different ones and writes do not', async () => {
    whmcs
      .answer('GetClientsDetails', answers.clientDetails, { delayMs: 20 })
      .answer('ModuleCustom', answers.moduleSuccess, { delayMs: 20 });
    const shared = client();
    const [first, second, other] = await Promise.all([
      shared.call('GetClientsDetails', { clientid: '1' }),
      shared.call('GetClientsDetails', { clientid: '1' }),
      shared.call('GetClientsDetails', { clientid: '2' }),
    ]);
    assert.equal(first, second);
    assert.notEqual(first, other);
    assert.equal(whmcs.requests('GetClientsDetails').length, 2);
    await Promise.all([
      shared.call('ModuleCustom', { serviceid: '1', func_name: 'reboot' }),
      shared.call('ModuleCustom', { serviceid: '1', func_name: 'reboot' }),
    ]);
    assert.equal(whmcs.requests('ModuleCustom').length, 2);
  });

  t.test('a read that starts after a write does not join a flight that started before it', async () => {
    whmcs.answer('GetClientsProducts', answers.clientsProducts([answers.service]), { delayMs: 30 }).answer('ModuleSuspend', answers.moduleSuccess);
    const shared = client();
    const before = shared.call('GetClientsProducts', { clientid: '1' });
    await shared.call('ModuleSuspend', { serviceid: '1' });
    const after = shared.call('GetClientsProducts', { clientid: '1' });
    await Promise.all([before, after]);
    assert.equal(whmcs.requests('GetClientsProducts').length, 2);
  });

  t.test('caches GetProducts, then serves it stale while one refresh runs', async () => {
    whmcs.answer('GetProducts', answers.catalog);
    const cached = client({ productCacheTtlMs: 30 });
    const first = await cached.call('GetProducts');
    clock += 29;
    assert.equal(await cached.call('GetProducts'), first);
    assert.equal(whmcs.requests('GetProducts').length, 1);
    clock += 21;
    assert.equal(await cached.call('GetProducts'), first, 'stale answer served at once');
    // Stale reads meanwhile join the one refresh in flight.
    await until(async () => (await cached.call('GetProducts')) !== first, 'refreshed in the background');
    const refreshed = await cached.call('GetProducts');
    assert.equal(await cached.call('GetProducts'), refreshed, 'the refreshed answer is fresh');
    assert.equal(whmcs.requests('GetProducts').length, 2);
    clock += 30 * 10 + 1;
    assert.notEqual(await cached.call('GetProducts'), refreshed, 'too old to serve stale (10 TTLs): fetched');
    assert.equal(whmcs.requests('GetProducts').length, 3);
  });

  t.test('a failed background refresh keeps the stale answer and is logged', async () => {
    whmcs.answer('GetProducts', answers.catalog, { times: 1 }).answer('GetProducts', '<html>down</html>');
    const cached = client({ productCacheTtlMs: 10 });
    const first = await cached.call('GetProducts');
    clock += 20;
    assert.equal(await cached.call('GetProducts'), first);
    await until(() => whmcs.logs.some((line) => /serving the cached answer/.test(line.msg)), 'the failed refresh is logged');
    assert.equal(await cached.call('GetProducts'), first);
  });

  t.test('a cancellation request drops the cached cancellation list', async () => {
    whmcs.answer('GetCancelledPackages', answers.cancelledPackagesEmpty).answer('AddCancelRequest', answers.addCancelRequest);
    const cached = client();
    await cached.call('GetCancelledPackages', { limitstart: 0 });
    await cached.call('GetCancelledPackages', { limitstart: 0 });
    assert.equal(whmcs.requests('GetCancelledPackages').length, 1);
    await cached.call('AddCancelRequest', { serviceid: '1' });
    await cached.call('GetCancelledPackages', { limitstart: 0 });
    assert.equal(whmcs.requests('GetCancelledPackages').length, 2);
  });
});

t.test('WHMCS client: real connections', async (t) => {
  t.test('connection refused (nothing sent) is unavailable, for reads and writes alike', async () => {
    const port = await closedPort();
    const client = createWhmcsClient(testConfig({ url: `http://127.0.0.1:${port}` }));
    try {
      const read = await rejectsWith(client.call('GetClientsDetails', { clientid: '1' }), 'unavailable');
      assert.equal(read.outcomeUnknown, false);
      assert.match(read.operatorMessage ?? '', /ECONNREFUSED/);
      const write = await rejectsWith(client.call('AddOrder', { clientid: '1' }), 'unavailable');
      assert.equal(write.outcomeUnknown, false);
    } finally {
      await client.close();
    }
  });

  t.test('a call whose deadline passes while it waits for a free connection was never sent: unavailable', async () => {
    let received = 0;
    const server = createServer((socket) => socket.once('data', () => (received += 1)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    assert.ok(address && typeof address === 'object');
    const client = createWhmcsClient(
      testConfig({ url: `http://127.0.0.1:${address.port}`, connections: 1, actionTimeoutsMs: { ModuleCustom: 200, AddOrder: 40 } }),
    );
    try {
      const holding = rejectsWith(client.call('ModuleCustom', { serviceid: '1', func_name: 'reboot' }), 'timeout');
      await sleep(20);
      const queued = await rejectsWith(client.call('AddOrder', { clientid: '1' }), 'unavailable');
      assert.equal(queued.outcomeUnknown, false);
      assert.equal((await holding).outcomeUnknown, true);
      await sleep(50);
      assert.equal(received, 1, 'the queued AddOrder was never written');
    } finally {
      await client.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  t.test('a connection reset after sending: a write is not retried and its outcome is unknown; a read is harmless, and sent again once', async () => {
    let received = 0;
    const server = createServer((socket) => {
      socket.once('data', () => {
        received += 1;
        socket.destroy();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    assert.ok(address && typeof address === 'object');
    const client = createWhmcsClient(testConfig({ url: `http://127.0.0.1:${address.port}` }));
    try {
      const write = await rejectsWith(client.call('ModuleTerminate', { serviceid: '1' }), 'upstream_error');
      assert.equal(write.outcomeUnknown, true);
      assert.equal(received, 1, 'never retried');
      const read = await rejectsWith(client.call('GetClientsProducts', { clientid: '1' }), 'upstream_error');
      assert.equal(read.outcomeUnknown, false);
      assert.equal(received, 3, 'the read retried once: no answer had started');
    } finally {
      await client.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
