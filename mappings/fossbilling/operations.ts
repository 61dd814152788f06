/**
 * What the FOSSBilling Backend does, over one `call` to the admin API: the Backend (backend.ts)
 * makes these per Backend call, its `call` carrying that call's context (the request's trace). The
 * admin role sees every client's records and `order/get`, `invoice/get` take no owner filter, so
 * every record read is checked against the account's FOSSBilling client id here, and lists are
 * always filtered by it.
 */
import type { z } from 'zod';
import { BackendError, type Customer, type WriteContext } from '../../src/backend/backend.js';
import type { Order, PageRequest, PageResult, ServiceAction } from '../../src/v1/schemas.js';
import type { FossbillingConfig } from './config.js';
import { afterWrite } from '../../src/upstream/answers.js';
import type { ActionTable, Freshness } from '../../src/upstream/policy.js';
import { byMessage, classified, notFound, unreadable } from './errors.js';
import {
  isCancellationScheduled,
  mapAccount,
  mapCredentials,
  mapInvoice,
  mapInvoiceDocument,
  mapOrder,
  mapService,
  statusOf,
} from './map.js';
import { isSold } from './catalog.js';
import { declareMethods, type FossbillingMethod } from './methods.js';
import { invoiceOfOrder, unpaidInvoiceOf } from './order-invoice.js';
import {
  ActionAnswer,
  ClientAnswer,
  describeIssues,
  HostingServiceAnswer,
  InvoiceAnswer,
  InvoiceListAnswer,
  OrderAnswer,
  OrderListAnswer,
  ProductListAnswer,
  type RawClient,
  type RawOrder,
  type RawProduct,
} from './parse.js';
import { orderPlacement } from './order-placement.js';
import { planServiceAction } from './service-actions.js';

/** A FOSSBilling id (a client's, an order's) as the gateway writes it. */
export const IS_ID = /^[1-9][0-9]{0,17}$/;
/** FOSSBilling's largest page (src/library/FOSSBilling/PaginationOptions.php). */
const MAX_PER_PAGE = 500;
/** Pages of MAX_PER_PAGE joined rows read for one service list; past that a list is refused. */
const MAX_ORDER_PAGES = 20;
/**
 * Invoices read by one order's search, newest first: its latest invoice and the credit notes after
 * it are at the top. One page, page 1: 0.6.x and 0.7.x read `page` from the query string only.
 */
const ORDER_INVOICE_PAGE = 10;

export type FossbillingOperations = ReturnType<typeof fossbillingOperations>;

/** What the operations of every call share: made once per Backend, from its config. */
export interface FossbillingSetup {
  config: FossbillingConfig;
  methods: ActionTable<FossbillingMethod>;
  publicIds: ReadonlySet<string>;
}

export function fossbillingSetup(config: FossbillingConfig): FossbillingSetup {
  return { config, methods: declareMethods(config), publicIds: new Set(config.publicProductIds) };
}

/** `call`: the transport's, bound to one Backend call's context. */
export function fossbillingOperations(
  { config, methods, publicIds }: FossbillingSetup,
  call: (method: FossbillingMethod, params: Record<string, unknown>, freshness?: Freshness) => Promise<unknown>,
  /** Told of a result of an unexpected shape, so that a cached one is not served again. */
  reject: (method: FossbillingMethod, params: Record<string, unknown>, result: unknown) => void,
  /**
   * Whole order lists read under one call context, by client id: the detector's pages of one pass
   * read it once. None for the shared operations (no context): each of their lists is read anew.
   */
  wholeLists?: Map<string, Promise<RawOrder[]>>,
) {
  async function request<S extends z.ZodType>(method: FossbillingMethod, params: Record<string, unknown>, schema: S, freshness?: Freshness): Promise<z.infer<S>> {
    const answer = await call(method, params, freshness);
    const parsed = schema.safeParse(answer);
    if (parsed.success) return parsed.data;
    reject(method, params, answer);
    throw unreadable(`FOSSBilling ${method}: unexpected answer: ${describeIssues(parsed.error)}`, methods[method].safety === 'write');
  }

  const clientIdOf = (customer: Customer): string => {
    if (!IS_ID.test(customer.upstreamId)) {
      throw new BackendError('upstream_error', 'The account is not set up correctly.', {
        operatorMessage: `account ${customer.accountId} has upstream id "${customer.upstreamId}", not a FOSSBilling client id`,
      });
    }
    return customer.upstreamId;
  };

  async function client(customer: Customer): Promise<RawClient> {
    const answer = await classified(request('client/get', { id: clientIdOf(customer) }, ClientAnswer), [
      {
        match: byMessage(/client not found/i),
        error: (cause) =>
          new BackendError('upstream_error', 'The account is not set up correctly.', {
            operatorMessage: `account ${customer.accountId} maps to FOSSBilling client ${customer.upstreamId}, which FOSSBilling does not know`,
            cause,
          }),
      },
    ]);
    if (answer.id !== customer.upstreamId) throw unreadable(`client/get for ${customer.upstreamId} answered client ${answer.id}`);
    return answer;
  }
  const currencyOf = async (customer: Customer): Promise<string> => mapAccount(await client(customer), config.defaultCurrency).currency;

  // ---- catalog --------------------------------------------------------------------------

  /** `freshness`: `fresh` for the checks before a write, which a stale catalog would let through. */
  async function catalog(freshness?: Freshness): Promise<RawProduct[]> {
    const answer = await request('product/get_list', { page: 1, per_page: MAX_PER_PAGE }, ProductListAnswer, freshness);
    if (answer.total > answer.list.length) throw unreadable(`FOSSBilling lists ${answer.total} products; the gateway reads at most ${MAX_PER_PAGE}`);
    return answer.list.filter((product) => isSold(product, publicIds));
  }

  async function publicProduct(id: string, freshness?: Freshness): Promise<RawProduct | undefined> {
    if (!IS_ID.test(id)) return undefined;
    return (await catalog(freshness)).find((product) => product.id === id);
  }

  // ---- orders and services (one record) --------------------------------------------------

  async function rawOrder(customer: Customer, id: string, what: string): Promise<RawOrder> {
    if (!IS_ID.test(id)) throw notFound(what);
    const order = await classified(request('order/get', { id }, OrderAnswer), [{ match: byMessage(/order not found/i), error: () => notFound(what) }]);
    // order/get takes no owner filter: another client's order is simply not found.
    if (order.client_id !== clientIdOf(customer) || order.id !== id) throw notFound(what);
    return order;
  }

  /**
   * An order as v1 shows it. FOSSBilling links an order's invoice only while it is unpaid (paying it
   * clears `unpaid_invoice_id`: Invoice/ServiceInvoiceItem.php markAsPaid, also when order/create
   * paid it from the client's credit), so without that link its invoices are searched by
   * `order_id` (those with a line for it) for its latest.
   */
  async function viewOrder(customer: Customer, order: RawOrder, currency?: string): Promise<Order> {
    const [known, found] = await Promise.all([currency ?? currencyOf(customer), orderInvoice(customer, order)]);
    return mapOrder(order, known, config.timeZone, found);
  }

  async function readOrder(customer: Customer, id: string): Promise<Order> {
    return viewOrder(customer, await rawOrder(customer, id, 'order'));
  }

  async function orderInvoice(customer: Customer, order: RawOrder) {
    const first = await request('invoice/get_list', { client_id: clientIdOf(customer), order_id: order.id, page: 1, per_page: ORDER_INVOICE_PAGE }, InvoiceListAnswer);
    return invoiceOfOrder(first.list, customer.upstreamId, order.id, unpaidInvoiceOf(order));
  }

  /** One page of a list filtered by client: every row must be the customer's all the same. */
  async function clientPage<Row extends { client_id?: string | null | undefined }, Item>(
    method: 'order/get_list' | 'invoice/get_list',
    schema: z.ZodType<{ list: Row[]; total: number }>,
    rows: string,
    customer: Customer,
    page: PageRequest,
    map: (row: Row, currency: string) => Item,
  ): Promise<PageResult<Item>> {
    const [answer, currency] = await Promise.all([
      request(method, { client_id: clientIdOf(customer), page: page.page, per_page: page.perPage }, schema),
      currencyOf(customer),
    ]);
    if (answer.list.some((row) => row.client_id !== customer.upstreamId)) {
      throw unreadable(`${method} for client ${customer.upstreamId} answered another client's ${rows}`);
    }
    return { items: answer.list.map((row) => map(row, currency)), total: answer.total };
  }

  /**
   * order/get_list LEFT JOINs the order meta without GROUP BY (Order/Service.php getSearchQuery): an
   * order with n meta rows (the order key, `stock_reserved_qty`, `cancel_at_period_end`) is counted
   * n times in `total` and can be cut across two pages. So the client's orders are read whole, at
   * FOSSBilling's largest page, each kept once, and the v1 page is cut from them.
   */
  async function listServices(customer: Customer, page: PageRequest): Promise<PageResult<ReturnType<typeof mapService>>> {
    const clientId = clientIdOf(customer);
    let whole = wholeLists?.get(clientId);
    if (!whole) {
      whole = allOrders(customer, clientId);
      wholeLists?.set(clientId, whole);
    }
    const [all, currency] = await Promise.all([whole, currencyOf(customer)]);
    const start = (page.page - 1) * page.perPage;
    return { items: all.slice(start, start + page.perPage).map((order) => mapService(order, currency)), total: all.length };
  }

  async function allOrders(customer: Customer, clientId: string): Promise<RawOrder[]> {
    const read = (upstreamPage: number) => request('order/get_list', { client_id: clientId, page: upstreamPage, per_page: MAX_PER_PAGE }, OrderListAnswer);
    const first = await read(1);
    const pages = Math.ceil(first.total / MAX_PER_PAGE);
    if (pages > MAX_ORDER_PAGES) throw unreadable(`order/get_list counts ${first.total} rows for client ${clientId}, more than the gateway reads`);
    const rest = await Promise.all(Array.from({ length: Math.max(0, pages - 1) }, (_, index) => read(index + 2)));
    const orders = new Map<string, RawOrder>();
    for (const row of [first, ...rest].flatMap((answer) => answer.list)) {
      if (row.client_id !== customer.upstreamId) throw unreadable(`order/get_list for client ${customer.upstreamId} answered another client's orders`);
      if (!orders.has(row.id)) orders.set(row.id, row);
    }
    // Oldest first, as WHMCS's GetClientsProducts (by id, ascending; it takes no order): one order on every backend.
    return [...orders.values()].sort((left, right) => Number(left.id) - Number(right.id));
  }

  async function readService(customer: Customer, id: string) {
    const [order, currency] = await Promise.all([rawOrder(customer, id, 'service'), currencyOf(customer)]);
    return mapService(order, currency);
  }

  async function getCredentials(customer: Customer, id: string) {
    const order = await rawOrder(customer, id, 'service');
    // Only hosting orders have a service with login details; others answer none.
    const hosting = order.status === 'pending_setup' ? null : await request('order/service', { id }, HostingServiceAnswer);
    return mapCredentials(order, hosting);
  }

  async function runServiceAction(customer: Customer, id: string, action: ServiceAction, ctx: WriteContext) {
    const order = await rawOrder(customer, id, 'service');
    // A paid order never activated is `failed_renew` with no service: cancel would fail on it (map.ts statusOf).
    const plan = planServiceAction(action, statusOf(order), isCancellationScheduled(order));
    const params = plan.withReason ? { id, reason: config.actionReason } : { id };
    await ctx.beforeWrite();
    await classified(request(plan.method, params, ActionAnswer), [
      { match: byMessage(/order not found/i), error: () => notFound('service') },
      { match: byMessage(/^only .* can be|cannot cancel/i), error: () => new BackendError('conflict', `The action "${action}" is not possible in the service's current state.`) },
    ]);
    const after = await afterWrite(readService(customer, id), `${plan.method} (order ${id})`);
    return { action, outcome: 'completed' as const, effective_on: null, service: after };
  }

  // ---- billing --------------------------------------------------------------------------

  const listInvoices = (customer: Customer, page: PageRequest) =>
    clientPage('invoice/get_list', InvoiceListAnswer, 'invoices', customer, page, (invoice, currency) => mapInvoice(invoice, currency, config.timeZone));

  async function getInvoiceDocument(customer: Customer, id: string) {
    if (!IS_ID.test(id)) throw notFound('invoice');
    const [invoice, account] = await Promise.all([
      classified(request('invoice/get', { id }, InvoiceAnswer), [{ match: byMessage(/invoice was not found/i), error: () => notFound('invoice') }]),
      client(customer),
    ]);
    // invoice/get takes no owner filter.
    if (invoice.client_id !== customer.upstreamId || invoice.id !== id) throw notFound('invoice');
    return mapInvoiceDocument(invoice, account, mapAccount(account, config.defaultCurrency).currency, config.timeZone);
  }

  return {
    clientIdOf,
    client,
    currencyOf,
    catalog,
    publicProduct,
    rawOrder,
    readOrder,
    ...orderPlacement({ config, request, clientIdOf, client, publicProduct, rawOrder, currencyOf, viewOrder }),
    listServices,
    readService,
    getCredentials,
    runServiceAction,
    listInvoices,
    getInvoiceDocument,
  };
}
