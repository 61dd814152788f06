/**
 * @fastify/http-proxy is loaded when the passthrough mounts its routes, not by every gateway: the
 * registry (mappings/index.ts) loads every backend's modules whatever the config says, and the
 * proxy with its dependencies (reply-from, ws) adds about 2 MB to a process that never forwards.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, SERVICE } from './harness.js';

function proxyLoaded(): boolean {
  return Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('/@fastify/http-proxy/'));
}

t.test('the proxy is loaded by the passthrough, when it mounts, and then forwards', async (t) => {
  // The harness has imported the gateway's modules and every backend's, as a gateway process does.
  assert.equal(proxyLoaded(), false);
  const gw = await buildPassthroughGateway();
  t.teardown(() => gw.close());
  assert.equal(proxyLoaded(), true);
  gw.upstream.answer(json(200, SERVICE));
  const response = await gw.app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(gw.keys['acme:all']) });
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.json().id, '7');
  assert.equal(gw.upstream.received.length, 1);
});
