/**
 * The v1 passthrough refuses a missing or malformed Idempotency-Key on the
 * request's head, before 100 Continue (src/http/validation.ts idempotencyKeyBeforeBody), as the
 * WHMCS/FOSSBilling routes do. The passthrough mounts its routes through @fastify/http-proxy and
 * copies the pipeline's hooks onto them (mappings/v1/forwarder.ts): without its preParsing hooks
 * the client was sent 100 Continue, uploaded its body, and was refused only after it.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { expectingExchange } from '../../helpers/http.js';
import { buildPassthroughGateway } from './harness.js';

t.test('passthrough: no Idempotency-Key on a POST → 400 before 100 Continue; nothing sent upstream', async (t) => {
  const gw = await buildPassthroughGateway();
  t.teardown(() => gw.close());
  const port = Number(new URL(await gw.app.listen({ host: '127.0.0.1', port: 0 })).port);
  const body = JSON.stringify({ action: 'reboot' });
  const raw = await expectingExchange(
    port,
    `POST /v1/services/1/actions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.keys['acme:all']}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
    body,
  );
  assert.ok(!raw.includes('100 Continue'), `a 100 Continue was sent before the refusal: ${raw.slice(0, 200)}`);
  assert.match(raw, /^HTTP\/1\.1 400 /, raw.slice(0, 300));
  assert.equal(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).reason, 'idempotency_key_missing');
  assert.deepEqual(gw.upstream.received, []);
});
