/**
 * FOSSBilling's order/get_list (src/modules/Order/Service.php@56a0871 getSearchQuery)
 * LEFT JOINs client_order_meta without GROUP BY, and Pagination::getPaginatedResultSet counts the
 * joined rows (`SELECT COUNT(1) FROM (<query>)`) and LIMITs them; getBatchForApi() then drops the
 * duplicate ids within the page. An order with two meta rows (the gateway's order key plus
 * `stock_reserved_qty`, which Product\Service::reserveStockForOrder() adds to every order of a
 * stock-controlled product; or `cancel_at_period_end`) is counted twice and may be cut across two
 * pages. The v1 page must still hold each service once, full pages, and the true total.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { backendWith, CTX, CUSTOMER, FakeCall } from './fake-call.js';
import * as answers from './fixtures/answers.js';

/** Three orders of client 1, each with the gateway key and FOSSBilling's stock reservation in its meta. */
const orders = ['3', '2', '1'].map((id) => ({
  ...answers.orderRow,
  id,
  meta: { gateway_idempotency_key: `acct_1:key-${id}:rec-1`, stock_reserved_qty: '1' },
}));

/** order/get_list as the SQL does it: one joined row per meta row, counted and LIMITed, then de-duplicated per page. */
function joinedOrderList(params: Record<string, unknown>) {
  const page = Number(params.page ?? 1);
  const perPage = Number(params.per_page ?? 100);
  const rows = orders.flatMap((order) => Object.keys(order.meta).map(() => order));
  const slice = rows.slice((page - 1) * perPage, page * perPage);
  return { pages: Math.ceil(rows.length / perPage), page, per_page: perPage, total: rows.length, list: [...new Set(slice)] };
}

t.test('services listed from a FOSSBilling whose orders carry two meta rows each', async () => {
  const fake = new FakeCall().answer('client/get', answers.client).answer('order/get_list', joinedOrderList);
  const backend = backendWith(fake);
  const first = await backend.listServices(CUSTOMER, { page: 1, perPage: 2 }, CTX);
  assert.equal(first.total, 3, 'the total counts services, not joined meta rows');
  assert.deepEqual(first.items.map((service) => service.id), ['1', '2'], 'a full page, oldest first');
  const second = await backend.listServices(CUSTOMER, { page: 2, perPage: 2 }, CTX);
  assert.deepEqual(second.items.map((service) => service.id), ['3']);
});
