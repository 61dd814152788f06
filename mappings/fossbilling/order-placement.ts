/**
 * Placing a FOSSBilling order, and finding one placed under an Idempotency-Key again (reconciliation):
 * the key's use is stored in the order's meta, which `order/get_list` can filter by.
 */
import type { z } from 'zod';
import { BackendError, type Customer, type OrderKeyContext, type OrderSearch, type WriteContext } from '../../src/backend/backend.js';
import { afterWrite } from '../../src/upstream/answers.js';
import type { Freshness } from '../../src/upstream/policy.js';
import type { Order, OrderInput, Price } from '../../src/v1/schemas.js';
import type { FossbillingConfig } from './config.js';
import { byMessage, classified } from './errors.js';
import type { FossbillingError } from './transport.js';
import { mapAccount, PERIOD_OF_CYCLE, productPrices } from './map.js';
import type { FossbillingMethod } from './methods.js';
import { CreatedOrderAnswer, OrderListAnswer, type RawClient, type RawOrder, type RawProduct } from './parse.js';

/** Orders read by one key search; more matches of the tag's prefix than this cannot be told apart. */
const KEY_SEARCH_PAGE = 20;

/**
 * The order's `config`. A hosting account is made for `config.domain` (Servicehosting/Service.php
 * _getDomainTuple, through attachOrderConfig or, before 0.8, prependOrderConfig): without it
 * order/create refuses every hosting order. The host name is the client's own domain, its first
 * label the sld and the rest the tld, dot included (FOSSBilling names the account `sld . tld`).
 * `hostname` is kept as well: map.ts reads it back.
 */
function orderConfig(product: RawProduct, hostname: string | undefined): Record<string, unknown> {
  if (product.type !== 'hosting') return hostname === undefined ? {} : { hostname };
  const dot = hostname?.indexOf('.') ?? -1;
  if (hostname === undefined || dot <= 0) {
    throw new BackendError('validation', `hostname: product ${product.id} is a hosting product; give the domain name (such as example.com) its account is for.`);
  }
  return { hostname, domain: { action: 'owndomain', owndomain_sld: hostname.slice(0, dot), owndomain_tld: hostname.slice(dot) } };
}

/**
 * Whether order/create activates the order, as FOSSBilling's own checkout does by the product's
 * `setup` (Cart/Service.php createFromCart): `after_order` at once; `after_payment` at once when
 * the order costs nothing (0.6.x and 0.7.x issue no invoice for it, so no payment would activate it),
 * else when its invoice is paid; `manual` never. `activateOrders`: every order, at once.
 */
function activates(config: FossbillingConfig, product: RawProduct, price: Price): boolean {
  return config.activateOrders || product.setup === 'after_order' || (isFree(price) && (product.setup ?? 'after_payment') === 'after_payment');
}

const isFree = (price: Price): boolean => Number(price.price) === 0 && Number(price.setup_fee) === 0;

/**
 * A free order is sent without an invoice: there is nothing to bill, and since 0.8.4 (no more
 * `price > 0` in createOrder) its 0.00 invoice is paid at once and its `renew` line fails the order
 * (failed_renew), which the `activate` that follows then refuses, so it was never set up.
 */
const invoiceOption = (config: FossbillingConfig, price: Price): string => (isFree(price) ? 'no-invoice' : config.invoiceOption);

/** FOSSBilling refusing that domain (703 sld, 704 tld; own domains not allowed for the product, a message with code 0). */
const refusesDomain = (error: FossbillingError): boolean => [703, 704].includes(Number(error.code)) || /own domain is not allowed/i.test(error.upstreamMessage);

/** What placing and finding orders takes from the operations of one Backend call (operations.ts). */
export interface PlacementDeps {
  config: FossbillingConfig;
  request<S extends z.ZodType>(method: FossbillingMethod, params: Record<string, unknown>, schema: S, freshness?: Freshness): Promise<z.infer<S>>;
  clientIdOf(customer: Customer): string;
  client(customer: Customer): Promise<RawClient>;
  publicProduct(id: string, freshness?: Freshness): Promise<RawProduct | undefined>;
  rawOrder(customer: Customer, id: string, what: string): Promise<RawOrder>;
  currencyOf(customer: Customer): Promise<string>;
  /** The order as v1 shows it, its invoice searched for when FOSSBilling no longer links one. */
  viewOrder(customer: Customer, order: RawOrder, currency?: string): Promise<Order>;
}

export function orderPlacement({ config, request, clientIdOf, client, publicProduct, rawOrder, currencyOf, viewOrder }: PlacementDeps) {
  /** Tied to this use of the key (its record), so a key reused after its record expired never matches an older order. */
  const orderKeyTag = (customer: Customer, ctx: OrderKeyContext): string => `${customer.accountId}:${ctx.idempotencyKey}:${ctx.idempotencyRecord}`;

  async function placeOrder(customer: Customer, input: OrderInput, ctx: OrderKeyContext & WriteContext): Promise<Order> {
    // Checked against the catalog as it is now: a cycle disabled since must be refused here.
    const [product, account] = await Promise.all([publicProduct(input.product_id, 'fresh'), client(customer)]);
    if (!product) throw new BackendError('validation', `product_id: there is no product ${input.product_id}.`);
    if (account.status === 'canceled') throw new BackendError('validation', 'The account is closed and cannot place orders.');
    const currency = mapAccount(account, config.defaultCurrency).currency;
    const prices = productPrices(product, currency);
    const offered = prices.map((price) => price.billing_cycle);
    const chosen = prices.find((price) => price.billing_cycle === input.billing_cycle);
    if (!chosen) {
      throw new BackendError('validation', `billing_cycle: "${input.billing_cycle}" is not offered for product ${product.id}; offered: ${offered.join(', ')}.`);
    }
    const optionIds = Object.keys(input.config_options ?? {});
    if (optionIds.length > 0) throw new BackendError('validation', `config_options.${optionIds[0]}: product ${product.id} has no such option.`);
    const period = PERIOD_OF_CYCLE[input.billing_cycle];
    const orderConfiguration = orderConfig(product, input.hostname);
    await ctx.beforeWrite();
    const created = await classified(
      request(
        'order/create',
        {
          client_id: clientIdOf(customer),
          product_id: product.id,
          ...(period === undefined ? {} : { period }),
          config: orderConfiguration,
          // Stored right after the order row, before hooks and invoice that can still fail with the
          // order in place (Order/Service.php createOrder): what findOrderByIdempotencyKey searches for.
          meta: { [config.orderKeyMeta]: orderKeyTag(customer, ctx) },
          activate: activates(config, product, chosen),
          invoice_option: invoiceOption(config, chosen),
        },
        CreatedOrderAnswer,
      ),
      [
        { match: (error) => Number(error.code) === 831, error: () => new BackendError('validation', `product_id: product ${product.id} is out of stock.`) },
        { match: refusesDomain, error: () => new BackendError('validation', `hostname: product ${product.id} does not take this domain name.`) },
        { match: byMessage(/client not found/i), error: (cause) => new BackendError('upstream_error', 'The account is not set up correctly.', { operatorMessage: cause.operatorMessage }) },
      ],
    );
    // Not necessarily linked: order/create approves the invoice with use_credits, and one the client's
    // credit covers (a free order's 0.00 one always) is paid, its link cleared, before it returns.
    return afterWrite(rawOrder(customer, created, 'order').then((order) => viewOrder(customer, order, currency)), `order/create (order ${created})`);
  }

  /**
   * Absent only with proof: the search answered, covered every match, and its rows show their meta
   * (a FOSSBilling that ignored the filter or hid meta could otherwise look like "no order").
   */
  async function findOrderByIdempotencyKey(customer: Customer, ctx: OrderKeyContext): Promise<OrderSearch> {
    const unknown = (reason: string): OrderSearch => ({ kind: 'unknown', reason: `order key search for client ${customer.upstreamId}: ${reason}` });
    const tag = orderKeyTag(customer, ctx);
    let answer: z.infer<typeof OrderListAnswer>;
    try {
      // The meta filter matches `value LIKE '<tag>%'` (src/modules/Order/Service.php getSearchQuery): compare exactly here.
      answer = await request(
        'order/get_list',
        { client_id: clientIdOf(customer), meta: { [config.orderKeyMeta]: tag }, page: 1, per_page: KEY_SEARCH_PAGE },
        OrderListAnswer,
      );
    } catch (error) {
      if (!(error instanceof BackendError)) throw error;
      return unknown(`order/get_list failed: ${error.operatorMessage ?? error.detail}`);
    }
    const metaOf = (order: RawOrder) => (Array.isArray(order.meta) ? {} : order.meta);
    const match = answer.list.find((order) => order.client_id === customer.upstreamId && metaOf(order)?.[config.orderKeyMeta] === tag);
    if (match) return { kind: 'found', order: await viewOrder(customer, match) };
    if (answer.total > answer.list.length) return unknown(`the search matched ${answer.total} orders, more than one page`);
    if (answer.list.some((order) => metaOf(order) === undefined)) return unknown('order/get_list rows do not show their meta');
    return { kind: 'absent' };
  }

  return { placeOrder, findOrderByIdempotencyKey };
}
