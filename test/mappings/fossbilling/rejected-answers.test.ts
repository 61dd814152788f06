/**
 * A cached read whose result the mapping cannot use (FOSSBilling's envelope, "success", the list
 * cut away) is not kept: the next read asks FOSSBilling again, rather than failing on the same
 * cached result until its TTL ends.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { createFossbillingBackend } from '../../../mappings/fossbilling/backend.js';
import { FossbillingConfigSchema } from '../../../mappings/fossbilling/config.js';
import { CTX } from './fake-call.js';
import * as answers from './fixtures/answers.js';

t.test('FOSSBilling: a catalog result of an unexpected shape is not cached', async (t) => {
  const results: unknown[] = [{ ...answers.page([]), list: 'unavailable' }, answers.page([answers.hostingProduct, answers.onceProduct])];
  const asked: string[] = [];
  const server = createServer((request, response) => {
    // The path alone: a list's page travels in the query too (FOSSBilling 0.6 and 0.7 read it there).
    asked.push(new URL(request.url ?? '/', 'http://fossbilling.test').pathname);
    request.resume();
    request.on('end', () => {
      const result = asked.at(-1)?.endsWith('/product/get_list') ? (results.length > 1 ? results.shift() : results[0]) : null;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ result, error: null }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  const backend = createFossbillingBackend(FossbillingConfigSchema.parse({ url: `http://127.0.0.1:${port}`, apiToken: 'token-secret-value' }));
  t.teardown(() => backend.close());

  await assert.rejects(backend.listProducts(CTX), (error: Error & { kind?: string }) => error.kind === 'upstream_error');
  const products = await backend.listProducts(CTX);
  assert.deepEqual(products.map((product) => product.id), ['1', '2'], 'read again within the TTL');
  assert.equal(asked.filter((url) => url.endsWith('/product/get_list')).length, 2);
  await backend.listProducts(CTX);
  assert.equal(asked.filter((url) => url.endsWith('/product/get_list')).length, 2, 'the usable result is cached');
});
