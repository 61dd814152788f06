/**
 * A request body in a content coding (RFC 9110 §8.4: `Content-Encoding: gzip`) was read as if its
 * bytes were the JSON. Some HTTP clients compress request bodies; their gzipped order got 400
 * invalid_request "not valid UTF-8" (the client is told its JSON is broken and to fix it), and a
 * body labelled gzip but sent plain was executed as if the label were not there. The gateway
 * decodes no coding: RFC 9110 §15.5.16 answers such a body 415 (contract §2's
 * `unsupported_media_type`, gateway-standards §3.1.4), with `Accept-Encoding: identity` saying
 * what it takes (§12.5.3). Nothing is executed and the Idempotency-Key stays free.
 */
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { bearer, buildTestGateway } from '../helpers/gateway.js';

const REBOOT = '{"action":"reboot"}';

t.test('a content-coded request body → 415 with Accept-Encoding: identity; nothing runs', async (t) => {
  const gw = await buildTestGateway();
  t.teardown(() => gw.close());
  const action = (key: string, payload: string | Buffer, encoding?: string) =>
    gw.app.inject({
      method: 'POST',
      url: '/v1/services/1/actions',
      headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': key, 'content-type': 'application/json', ...(encoding ? { 'content-encoding': encoding } : {}) },
      payload,
    });
  const calls = () => gw.simulator.calls.length;
  const before = calls();

  for (const [label, payload, encoding] of [
    ['gzipped', gzipSync(REBOOT), 'gzip'],
    ['labelled gzip, sent plain', REBOOT, 'gzip'],
    ['brotli', REBOOT, 'br'],
    ['a coding after identity', REBOOT, 'identity, gzip'],
  ] as const) {
    const response = await action('coded-1', payload, encoding);
    assert.equal(response.statusCode, 415, `${label}: ${response.body}`);
    assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(response.json().reason, 'unsupported_media_type', label);
    assert.equal(response.headers['accept-encoding'], 'identity', label);
  }
  assert.equal(calls(), before, 'nothing was asked of WHMCS');

  const plain = await action('coded-1', REBOOT, 'identity');
  assert.equal(plain.statusCode, 200, 'identity is no coding; the key was still free');
  assert.equal(plain.headers['idempotent-replayed'], undefined);
  assert.equal((await action('coded-2', REBOOT)).statusCode, 200, 'no Content-Encoding at all');
});

t.test('PUT /v1/webhooks: the same', async (t) => {
  const gw = await buildTestGateway();
  t.teardown(() => gw.close());
  const response = await gw.app.inject({
    method: 'PUT',
    url: '/v1/webhooks',
    headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json', 'content-encoding': 'br' },
    payload: '{"url":null}',
  });
  assert.equal(response.statusCode, 415);
  assert.equal(response.headers['accept-encoding'], 'identity');
  // Integrator clients check every header against the document (test/helpers/contract-client.ts).
  const document = (await gw.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  assert.ok(document.paths['/v1/webhooks'].put.responses['415'].headers['Accept-Encoding'], 'documented on the 415');
});
