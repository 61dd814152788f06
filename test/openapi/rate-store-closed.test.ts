/**
 * With `rateLimits.onStoreError: closed`, every request whose source-IP limit cannot be decided is
 * answered 503 store_unavailable, public routes included (request-gate.ts): the document must say
 * so on every operation, GET /v1/openapi.json too.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { StoreUnavailableError } from '../../src/stores/types.js';
import { buildTestGateway } from '../helpers/gateway.js';

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { description: string; headers?: Record<string, unknown> }> }>> };

t.test('a fail-closed rate-limit store that is down: every public route answers a documented 503', async () => {
  const stores = createMemoryStores();
  const hit = stores.rateLimits.hit.bind(stores.rateLimits);
  let down = false;
  stores.rateLimits.hit = (groups) => (down ? Promise.reject(new StoreUnavailableError('rate-limit store down')) : hit(groups));
  const gw = await buildTestGateway({ stores, config: { rateLimits: { onStoreError: 'closed' } } });
  t.teardown(() => gw.close());
  const doc = (await gw.app.inject({ url: '/v1/openapi.json' })).json() as Doc;
  down = true;
  for (const url of ['/v1/openapi.json', '/v1/health']) {
    const response = await gw.app.inject({ url });
    assert.equal(response.statusCode, 503, url);
    assert.equal(response.json().reason, 'store_unavailable', url);
    assert.ok(response.headers['retry-after'], url);
    const documented = doc.paths[url]?.get?.responses['503'];
    assert.ok(documented, `${url} documents 503`);
    assert.match(documented.description, /`store_unavailable`/, url);
    assert.ok(documented.headers?.['Retry-After'], `${url} documents Retry-After on 503`);
  }
});
