/**
 * A proxy's 504 page in front of the billing panel means the panel did not answer in time: the
 * client gets 504 `upstream_timeout` (contract §2), as from the v1 passthrough and the gateway's own
 * timeout, and a write so answered keeps its Idempotency-Key held (it may have run).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { fromBackend } from '../../src/http/problems.js';
import { FossbillingConfigSchema } from '../../mappings/fossbilling/config.js';
import { declareMethods } from '../../mappings/fossbilling/methods.js';
import { fossbillingProtocol } from '../../mappings/fossbilling/transport.js';
import { BackendError } from '../../src/backend/backend.js';
import { buildTestGateway, type TestGateway } from '../helpers/gateway.js';
import { call } from '../helpers/http.js';

const GATEWAY_TIMEOUT_PAGE = '<html><head><title>504 Gateway Time-out</title></head><body><center><h1>504 Gateway Time-out</h1></center><hr><center>nginx</center></body></html>';

/** A proxy in front of WHMCS that forwards every call, and answers its own 504 page instead of WHMCS's answer to the actions named. */
async function startTimingOutProxy(target: string, timingOut: ReadonlySet<string>): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const action = new URLSearchParams(body).get('action') ?? '';
      void fetch(`${target}${request.url ?? '/'}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body }).then(async (answer) => {
        const text = Buffer.from(await answer.arrayBuffer());
        if (timingOut.has(action)) {
          response.writeHead(504, { 'content-type': 'text/html' });
          response.end(GATEWAY_TIMEOUT_PAGE);
          return;
        }
        response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        response.end(text);
      }, (error: unknown) => response.destroy(error as Error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

t.test('WHMCS behind a proxy that answers 504', async (t) => {
  let gw: TestGateway;
  let proxy: { url: string; server: Server };
  let base: string;
  let key: string;
  t.before(async () => {
    const { startWhmcsSimulator } = await import('../../simulators/whmcs/server.js');
    const simulator = await startWhmcsSimulator();
    const origin = new URL(simulator.url).origin;
    proxy = await startTimingOutProxy(origin, new Set(['GetInvoices', 'ModuleCustom']));
    gw = await buildTestGateway({ simulator, whmcs: { url: `${proxy.url}${new URL(simulator.url).pathname}` } });
    t.teardown(() => simulator.close());
    base = await gw.app.listen({ host: '127.0.0.1', port: 0 });
    key = gw.keys['acme:all'] as string;
  });
  t.teardown(async () => {
    await gw.close();
    await new Promise<void>((resolve) => proxy.server.close(() => resolve()));
  });

  t.test('a read: 504 upstream_timeout, without the proxy page', async () => {
    const response = await call(base, 'GET', '/v1/billing/invoices', { key });
    assert.equal(response.status, 504, response.text);
    assert.equal(response.json().reason, 'upstream_timeout');
    assert.ok(!response.text.includes('nginx'));
  });

  t.test('a write: 504 upstream_timeout, and its Idempotency-Key stays held (the action may have run)', async () => {
    const headers = { 'idempotency-key': 'proxy-504-reboot' };
    const first = await call(base, 'POST', '/v1/services/1/actions', { key, body: { action: 'reboot' }, headers });
    assert.equal(first.status, 504, first.text);
    assert.equal(first.json().reason, 'upstream_timeout');
    const sent = gw.simulator.calls.filter((c) => c.action === 'modulecustom').length;
    const retry = await call(base, 'POST', '/v1/services/1/actions', { key, body: { action: 'reboot' }, headers });
    assert.ok([409, 503].includes(retry.status), retry.text);
    assert.ok(['idempotency_in_progress', 'outcome_unknown'].includes(retry.json().reason), retry.text);
    assert.equal(gw.simulator.calls.filter((c) => c.action === 'modulecustom').length, sent, 'not sent again');
  });
});

t.test('FOSSBilling behind a proxy that answers 504: 504 upstream_timeout; after a write the outcome is unknown', async () => {
  const config = FossbillingConfigSchema.parse({ url: 'http://fossbilling.test', apiToken: 'token-secret-value', circuitBreaker: { enabled: false } });
  const protocol = fossbillingProtocol(config);
  const methods = declareMethods(config);
  const page = { statusCode: 504, headers: { 'content-type': 'text/html' }, body: Buffer.from(GATEWAY_TIMEOUT_PAGE) };
  for (const [method, write] of [['order/get', false], ['order/create', true]] as const) {
    const error = (() => {
      try {
        protocol.read(methods[method], page);
      } catch (thrown) {
        return thrown;
      }
      return assert.fail('expected a failure');
    })();
    assert.ok(error instanceof BackendError);
    const problem = fromBackend(error);
    assert.equal(problem.status, 504, method);
    assert.equal(problem.reason, 'upstream_timeout', method);
    assert.equal(error.outcomeUnknown, write, method);
  }
});
