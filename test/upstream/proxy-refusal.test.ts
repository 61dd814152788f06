/**
 * A proxy or CDN in front of WHMCS or FOSSBilling turns a call away with 429 or 503 and an HTML page
 * (rate limit, maintenance, Cloudflare): integrators get 503 `upstream_unavailable` with the proxy's
 * Retry-After, capped, as the v1 passthrough answers; and an upstream's Retry-After never asks them
 * to wait longer than the cap.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { fromBackend } from '../../src/http/problems.js';
import { createWhmcsClient } from '../../mappings/whmcs/client.js';
import { FossbillingConfigSchema } from '../../mappings/fossbilling/config.js';
import { declareMethods } from '../../mappings/fossbilling/methods.js';
import { fossbillingProtocol } from '../../mappings/fossbilling/transport.js';
import { API_PATH, FakeWhmcs, ORIGIN, rejectsWith, testConfig } from '../mappings/whmcs/fake-whmcs.js';

/** The longest Retry-After the gateway passes on from an upstream (README, "Upstream refusals"). */
const MAX_UPSTREAM_RETRY_AFTER_MS = 300_000;
const PAGE = '<!DOCTYPE html><html><head><title>503 Service Unavailable</title></head><body>Down for maintenance</body></html>';

t.test('WHMCS behind a proxy that answers 429/503 with an HTML page', async (t) => {
  let whmcs: FakeWhmcs;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
  });
  t.afterEach(() => whmcs.close());

  const client = () => createWhmcsClient(testConfig({ circuitBreaker: { enabled: false } }), { dispatcher: whmcs.agent, logger: whmcs.logger });
  const proxyAnswers = (statusCode: number, headers: Record<string, string> = {}) =>
    whmcs.agent
      .get(ORIGIN)
      .intercept({ path: API_PATH, method: 'POST' })
      .reply(statusCode, PAGE, { headers: { 'content-type': 'text/html', ...headers } })
      .persist();

  t.test('a read refused with 503 and Retry-After: 503 upstream_unavailable with that Retry-After', async () => {
    proxyAnswers(503, { 'retry-after': '30' });
    const error = await rejectsWith(client().call('GetClientsDetails', { clientid: '1' }), 'unavailable');
    assert.equal(error.retryAfterMs, 30_000);
    const problem = fromBackend(error);
    assert.equal(problem.status, 503);
    assert.equal(problem.reason, 'upstream_unavailable');
    assert.equal(problem.headers['retry-after'], '30');
    assert.match(error.operatorMessage ?? '', /HTTP 503/);
  });

  t.test('a Retry-After of a day is capped', async () => {
    proxyAnswers(429, { 'retry-after': '86400' });
    const error = await rejectsWith(client().call('GetClientsDetails', { clientid: '1' }), 'unavailable');
    assert.equal(error.retryAfterMs, MAX_UPSTREAM_RETRY_AFTER_MS);
    assert.equal(fromBackend(error).headers['retry-after'], String(MAX_UPSTREAM_RETRY_AFTER_MS / 1000));
  });

  t.test('without Retry-After: 503 with the default Retry-After', async () => {
    proxyAnswers(429);
    const error = await rejectsWith(client().call('GetClientsDetails', { clientid: '1' }), 'unavailable');
    assert.equal(fromBackend(error).headers['retry-after'], '5');
  });

  t.test('a write refused with 429 did not run (a rate limiter turns it away before the panel); with 503 its outcome is unknown', async () => {
    proxyAnswers(429, { 'retry-after': '7' });
    const limited = await rejectsWith(client().call('AddOrder', { clientid: '1' }), 'unavailable');
    assert.equal(limited.outcomeUnknown, false);
    await whmcs.close();
    whmcs = new FakeWhmcs();
    proxyAnswers(503);
    const unavailable = await rejectsWith(client().call('AddOrder', { clientid: '1' }), 'unavailable');
    assert.equal(unavailable.outcomeUnknown, true, 'a 503 can come from the origin halfway through the write');
  });
});

t.test('FOSSBilling behind a proxy, and its own Retry-After', async (t) => {
  const config = FossbillingConfigSchema.parse({ url: 'http://fossbilling.test', apiToken: 'token-secret-value' });
  const protocol = fossbillingProtocol(config);
  const actions = declareMethods(config);
  const reply = (statusCode: number, body: string, headers: Record<string, string> = {}) => ({ statusCode, headers, body: Buffer.from(body) });
  const failure = (read: () => unknown) => {
    try {
      read();
    } catch (error) {
      return error as import('../../src/backend/backend.js').BackendError;
    }
    return assert.fail('expected a failure');
  };

  t.test('a proxy 503 page: unavailable with its Retry-After', async () => {
    const error = failure(() => protocol.read(actions['order/get'], reply(503, PAGE, { 'retry-after': '20' })));
    assert.equal(error.kind, 'unavailable');
    assert.equal(error.retryAfterMs, 20_000);
  });

  t.test('a proxy 429 page to a write: unavailable, not run', async () => {
    const error = failure(() => protocol.read(actions['order/create'], reply(429, PAGE, { 'retry-after': '3' })));
    assert.equal(error.kind, 'unavailable');
    assert.equal(error.outcomeUnknown, false);
    assert.equal(error.retryAfterMs, 3_000);
  });

  t.test("FOSSBilling's own 429 with Retry-After: 86400 is capped", async () => {
    const body = JSON.stringify({ result: null, error: { message: 'Rate limit exceeded', code: 429 } });
    const error = failure(() => protocol.read(actions['order/get'], reply(429, body, { 'retry-after': '86400' })));
    assert.equal(error.kind, 'unavailable');
    assert.equal(error.retryAfterMs, MAX_UPSTREAM_RETRY_AFTER_MS);
  });
});
