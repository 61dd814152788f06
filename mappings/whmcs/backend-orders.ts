/**
 * Orders on WHMCS: reading one, placing one (AddOrder, with the idempotency key stored in a product
 * custom field, then AcceptOrder), and finding the order of an earlier attempt by that key.
 */
import {
  BackendError,
  type CallContext,
  type Customer,
  type OrderKeyContext,
  type OrderSearch,
  type WriteContext,
} from '../../src/backend/backend.js';
import type { Order, OrderInput } from '../../src/v1/schemas.js';
import { afterWrite } from '../../src/upstream/answers.js';
import { classified, type ErrorRule, failure, IS_ID, notFound, unknownClient, type WhmcsCalls } from './backend-calls.js';
import type { WhmcsCatalog } from './backend-catalog.js';
import type { WhmcsServices } from './backend-services.js';
import type { WhmcsLogger } from './client.js';
import type { WhmcsConfig } from './config.js';
import { mapOrder } from './map.js';
import { validateOrder } from './orders.js';
import { AddOrderAnswer, OrdersAnswer, type RawProduct, type RawService } from './parse.js';
import { encodePhpArray } from './php-serialize.js';

/** Services read per page when searching a client's services for an order key (all pages are read). */
const SERVICE_SCAN_PAGE = 100;

const sameName = (left: string, right: string): boolean => left.trim().toLowerCase() === right.trim().toLowerCase();

/**
 * Idempotency keys are per account (several accounts could share one WHMCS client), and the
 * record id ties the tag to one use of the key: a key reused after its record expired never
 * matches the first use's order.
 */
const orderKeyTag = (customer: Customer, ctx: OrderKeyContext): string =>
  `${customer.accountId}:${ctx.idempotencyKey}:${ctx.idempotencyRecord}`;

export interface WhmcsOrders {
  /** `currency` saves reading the client when the caller already has it. */
  readOrder(customer: Customer, id: string, currency?: string): Promise<Order>;
  placeOrder(customer: Customer, input: OrderInput, ctx: OrderKeyContext & WriteContext): Promise<Order>;
  findOrderByIdempotencyKey(customer: Customer, ctx: OrderKeyContext & Partial<WriteContext>): Promise<OrderSearch>;
}

export function createWhmcsOrders(
  calls: WhmcsCalls,
  catalog: WhmcsCatalog,
  services: Pick<WhmcsServices, 'servicePage'>,
  config: WhmcsConfig,
  logger: WhmcsLogger | undefined,
): WhmcsOrders {
  const { client, request, clientIdOf, clientDetails } = calls;
  const publicProductIds = new Set(config.publicProductIds);

  async function readOrder(customer: Customer, id: string, currency?: string): Promise<Order> {
    if (!IS_ID.test(id)) throw notFound('order');
    // id and userid are ANDed: another client's order is simply not found.
    const [answer, orderCurrency] = await Promise.all([
      request('GetOrders', { id, userid: clientIdOf(customer), limitstart: 0, limitnum: 1 }, OrdersAnswer),
      currency ?? clientDetails(customer).then((account) => account.currency_code),
    ]);
    calls.assertOwned('GetOrders', customer, answer.orders.map((order) => order.userid), 'order');
    const order = answer.orders.find((candidate) => candidate.id === id);
    if (!order) throw notFound('order');
    return mapOrder(order, orderCurrency, config.timeZone);
  }

  // ---- placing --------------------------------------------------------------------------

  /** The product custom field that stores the order key: configured id, else found by name. */
  function orderKeyFieldId(product: RawProduct): string | undefined {
    const configured = config.orderKeyField.ids[product.pid];
    if (configured !== undefined) return String(configured);
    return product.customfields.find((field) => sameName(field.name, config.orderKeyField.name))?.id;
  }

  const addOrderErrors = (customer: Customer): ErrorRule[] => [
    { match: /client id not found/i, error: (cause) => unknownClient(customer, cause) },
    { match: /client status is closed/i, error: () => new BackendError('validation', 'The account is closed and cannot place orders.') },
    {
      match: /invalid payment method/i,
      error: (cause) =>
        new BackendError('upstream_error', 'Ordering is not available at the moment.', {
          operatorMessage: `paymentMethod "${config.paymentMethod}" is not an active WHMCS payment gateway: ${cause.upstreamMessage}`,
          cause,
        }),
    },
  ];

  /** AcceptOrder failing leaves a placed order behind, which the client must still be told about. */
  async function acceptOrder(orderid: string, ctx: CallContext): Promise<void> {
    try {
      await client.call('AcceptOrder', { orderid, autosetup: config.acceptOrder.autoSetup, sendemail: config.acceptOrder.sendEmail });
    } catch (error) {
      const reason = error instanceof BackendError ? (error.operatorMessage ?? error.detail) : String(error);
      logger?.error({ requestId: ctx.requestId, trace_id: ctx.trace?.traceId, orderId: orderid, error: reason }, 'WHMCS AcceptOrder failed; the order stays pending');
    }
  }

  async function placeOrder(customer: Customer, input: OrderInput, ctx: OrderKeyContext & WriteContext): Promise<Order> {
    // Checked against the catalog as it is now: AddOrder silently bills another cycle for a disabled one.
    const [listed, account] = await Promise.all([catalog.publicProduct(input.product_id, 'fresh'), clientDetails(customer)]);
    // Stock is the one thing an order changes in the catalog, and AddOrder does not check it: a
    // product under stock control is read again as it is now, since another worker's or instance's
    // order may have taken the last unit within the catalog's time to live.
    const product = listed?.stockcontrol ? await catalog.publicProduct(input.product_id, 'uncached') : listed;
    if (!product) throw new BackendError('validation', `product_id: there is no product ${input.product_id}.`);
    if (account.status === 'closed') throw new BackendError('validation', 'The account is closed and cannot place orders.');
    const configOptions = validateOrder(product, input, account.currency_code);
    const keyFieldId = orderKeyFieldId(product);
    // Only WHMCS's order form checks required fields; AddOrder would leave this one empty.
    const unfilled = product.customfields.find((field) => field.required && field.id !== keyFieldId);
    if (unfilled) {
      throw new BackendError('validation', `product_id: product ${product.pid} asks for "${unfilled.name}" on ordering, which cannot be given through this API.`);
    }
    if (keyFieldId === undefined) {
      // Without the key stored upstream, an order whose outcome is unknown could never be found again.
      throw new BackendError('upstream_error', 'Ordering is not available for this product at the moment.', {
        operatorMessage: `product ${product.pid} has no custom field "${config.orderKeyField.name}" (or orderKeyField.ids entry) to store the idempotency key`,
      });
    }
    const cycle = product.paytype === 'recurring' ? input.billing_cycle : product.paytype;
    await ctx.beforeWrite();
    const answer = await classified(
      client.call('AddOrder', {
        clientid: clientIdOf(customer),
        paymentmethod: config.paymentMethod,
        pid: [product.pid],
        billingcycle: [cycle],
        configoptions: configOptions.length > 0 ? [encodePhpArray(configOptions)] : undefined,
        customfields: [encodePhpArray([[Number(keyFieldId), orderKeyTag(customer, ctx)]])],
        // The service's domain (hostname for a VPS). Never `hostname[n]` as well: WHMCS then stores
        // "<hostname>.<domain>" for a name with fewer than two dots (calcCartTotals).
        domain: input.hostname === undefined ? undefined : [input.hostname],
        noemail: true,
      }),
      addOrderErrors(customer),
    );
    const placed = calls.parse('AddOrder', answer, AddOrderAnswer);
    if (config.acceptOrder.enabled) await acceptOrder(placed.orderid, ctx);
    return afterWrite(readOrder(customer, placed.orderid, account.currency_code), `AddOrder (order ${placed.orderid})`);
  }

  // ---- reconciliation -------------------------------------------------------------------

  /** The service's value of the order key field; undefined when the answer does not show that field. */
  function orderKeyValue(service: RawService): string | undefined {
    const configured = config.orderKeyField.ids[service.pid];
    return service.customfields.find((field) =>
      configured !== undefined ? field.id === String(configured) : sameName(field.name, config.orderKeyField.name),
    )?.value;
  }

  async function orderOfService(customer: Customer, service: RawService, ctx: OrderKeyContext & Partial<WriteContext>): Promise<OrderSearch> {
    const orderid = service.orderid;
    if (!orderid) return { kind: 'unknown', reason: `WHMCS service ${service.id} carries the order key but no order id` };
    const read = async (): Promise<OrderSearch> => {
      try {
        return { kind: 'found', order: await readOrder(customer, orderid) };
      } catch (error) {
        return { kind: 'unknown', reason: `order ${orderid} carries the order key but could not be read: ${failure(error)}` };
      }
    };
    const found = await read();
    // The earlier attempt's AddOrder answer was lost, so it never sent AcceptOrder: accepted now, as
    // a placed order is. WHMCS accepts only a Pending order, so one accepted meanwhile stays as it is.
    if (!config.acceptOrder.enabled || found.kind !== 'found' || found.order.status !== 'pending' || !ctx.beforeWrite) return found;
    await ctx.beforeWrite();
    await acceptOrder(orderid, ctx);
    return read();
  }

  /**
   * Proof of absence or nothing: every page of the client's services is read, and every service
   * of a product with the key field must show that field's value.
   */
  async function findOrderByIdempotencyKey(customer: Customer, ctx: OrderKeyContext & Partial<WriteContext>): Promise<OrderSearch> {
    const unknown = (reason: string): OrderSearch => ({ kind: 'unknown', reason: `order key search for client ${customer.upstreamId}: ${reason}` });
    let products: RawProduct[];
    try {
      products = await catalog.all();
    } catch (error) {
      return unknown(`reading the products failed: ${failure(error)}`);
    }
    const keyed = new Set(products.filter((product) => orderKeyFieldId(product) !== undefined).map((product) => product.pid));
    if (![...keyed].some((pid) => publicProductIds.has(pid))) {
      return unknown(`no public product has the custom field "${config.orderKeyField.name}"`);
    }
    const tag = orderKeyTag(customer, ctx);
    const seen = new Set<string>();
    let total: number | undefined;
    for (let limitstart = 0; total === undefined || limitstart < total; limitstart += SERVICE_SCAN_PAGE) {
      let page: { services: RawService[]; total: number };
      try {
        page = await services.servicePage(customer, { limitstart, limitnum: SERVICE_SCAN_PAGE });
      } catch (error) {
        return unknown(`reading services at offset ${limitstart} failed: ${failure(error)}`);
      }
      if (total !== undefined && page.total !== total) return unknown(`the service count changed during the search (${total}, then ${page.total})`);
      total = page.total;
      if (page.services.length === 0 && limitstart < total) return unknown(`GetClientsProducts answered no services at offset ${limitstart} of ${total}`);
      for (const service of page.services) {
        seen.add(service.id);
        const value = orderKeyValue(service);
        if (value === tag) return orderOfService(customer, service, ctx);
        if (value === undefined && keyed.has(service.pid)) {
          return unknown(
            `GetClientsProducts does not show the custom field "${config.orderKeyField.name}" of service ${service.id} (product ${service.pid}); the answers must include the services' customfields`,
          );
        }
      }
    }
    if (seen.size < (total ?? 0)) return unknown(`${seen.size} distinct services read of ${total}`);
    return { kind: 'absent' };
  }

  return { readOrder, placeOrder, findOrderByIdempotencyKey };
}
