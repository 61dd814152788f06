/**
 * FOSSBilling 0.6 and 0.7 take `page` from the query string only, never from the POSTed body:
 * - 0.7.x src/library/FOSSBilling/Pagination.php:64 `$page ??= filter_var($request->query->get($pageParam), ...)`
 *   (the callers pass no page: src/modules/Invoice/Api/Admin.php:31-32, src/modules/Order/Api/Admin.php:47-48 at 0.7.2);
 * - 0.6.x src/library/Box/Pagination.php:72 `$page = $_GET['page'] ?? 1`.
 * A gateway that sends `page` in the body only is answered page 1 for every page: `GET /v1/billing/invoices?page=2`
 * showed page 1's invoices again, and a client's services past FOSSBilling's first 500 rows were dropped.
 * The server below answers as 0.7's pager does, over the real transport.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { createFossbillingBackend } from '../../../mappings/fossbilling/backend.js';
import { FossbillingConfigSchema } from '../../../mappings/fossbilling/config.js';
import * as answers from './fixtures/answers.js';
import { CTX, CUSTOMER } from './fake-call.js';

const invoices = Array.from({ length: 30 }, (_, index) => ({ ...answers.invoice, id: 30 - index, nr: String(30 - index) }));
const orders = Array.from({ length: 600 }, (_, index) => ({ ...answers.orderRow, id: String(600 - index), meta: {} }));

function paged<T>(rows: T[], request: IncomingMessage, body: Record<string, unknown>) {
  const page = Number(new URL(request.url ?? '/', 'http://x').searchParams.get('page') ?? 1);
  const perPage = Number(body.per_page ?? 100);
  return { pages: Math.ceil(rows.length / perPage), page, per_page: perPage, total: rows.length, list: rows.slice((page - 1) * perPage, page * perPage) };
}

const server = createServer((request, response) => {
  let text = '';
  request.on('data', (chunk: Buffer) => (text += chunk.toString()));
  request.on('end', () => {
    const body = JSON.parse(text || '{}') as Record<string, unknown>;
    const method = new URL(request.url ?? '/', 'http://x').pathname.replace('/api/admin/', '');
    const result =
      method === 'client/get' ? answers.client : method === 'invoice/get_list' ? paged(invoices, request, body) : method === 'order/get_list' ? paged(orders, request, body) : null;
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify(answers.envelope.ok(result)));
  });
});

t.before(() => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)));
t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));

const backend = () => {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return createFossbillingBackend(FossbillingConfigSchema.parse({ url, apiToken: 'token-secret', circuitBreaker: { enabled: false } }));
};

t.test('invoice page 2 on a FOSSBilling 0.7 is page 2, not page 1 again', async () => {
  const gateway = backend();
  t.teardown(() => gateway.close());
  const page = await gateway.listInvoices(CUSTOMER, { page: 2, perPage: 10 }, CTX);
  assert.deepEqual(page.items.map((invoice) => invoice.id), ['20', '19', '18', '17', '16', '15', '14', '13', '12', '11']);
  assert.equal(page.total, 30);
});

t.test('a client with more than 500 orders on a FOSSBilling 0.7: every service is counted and listed', async () => {
  const gateway = backend();
  t.teardown(() => gateway.close());
  const page = await gateway.listServices(CUSTOMER, { page: 6, perPage: 100 }, CTX);
  assert.equal(page.total, 600);
  assert.deepEqual([page.items[0]?.id, page.items.at(-1)?.id], ['501', '600']);
});
