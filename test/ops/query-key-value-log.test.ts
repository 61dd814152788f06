/**
 * Contract §1: a key in the query string is rejected with 400 "and never logged". The request gate
 * refuses a key under any parameter name (parseApiKey on every value), but the access log showed
 * the values of `page` and `per_page` as sent: a key put there (a script that swapped its variables,
 * `?per_page=$KEY`) was refused and then written whole to the log.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { parseApiKey } from '../../src/keys/api-key.js';
import { bearer, buildTestGateway } from '../helpers/gateway.js';

function accessUrls(logs: string[]): string[] {
  return logs
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.includes('"msg":"request completed"'))
    .map((line) => (JSON.parse(line) as { req: { url: string } }).req.url);
}

t.test('a key sent as the value of page or per_page is refused and not logged; page numbers still are', async () => {
  const gw = await buildTestGateway({ config: { logLevel: 'trace' } });
  try {
    const key = gw.keys['acme:all'] as string;
    const secret = parseApiKey(key)?.secret as string;
    for (const url of [`/v1/services?page=${key}`, `/v1/billing/invoices?page=1&per_page=${encodeURIComponent(key)}`]) {
      const response = await gw.app.inject({ method: 'GET', url, headers: bearer(key) });
      assert.equal(response.statusCode, 400, url);
      assert.equal(response.json().reason, 'invalid_request');
    }
    await gw.app.inject({ method: 'GET', url: '/v1/services?page=2&per_page=5', headers: bearer(key) });
    const text = gw.logs.join('');
    assert.ok(!text.includes(secret.slice(0, 16)), 'the key reached the log');
    assert.deepEqual(accessUrls(gw.logs), [
      '/v1/services?page=[redacted]',
      '/v1/billing/invoices?page=1&per_page=[redacted]',
      '/v1/services?page=2&per_page=5',
    ]);
  } finally {
    await gw.close();
  }
});
