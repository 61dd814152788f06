/**
 * The v1 Backend on top of FOSSBilling's admin API. The admin role sees every client's records and
 * `order/get`, `invoice/get` take no owner filter, so every record read is checked against the
 * account's FOSSBilling client id here, and lists are always filtered by it.
 */
import type { Backend, CallContext, Customer } from '../../src/backend/backend.js';
import { answersProbe } from '../../src/upstream/busy.js';
import { withFreshness } from '../../src/upstream/client.js';
import { within } from '../../src/upstream/request-deadline.js';
import type { FossbillingConfig } from './config.js';
import { diagnoseFossbilling } from './doctor.js';
import { notFound, unreadable } from './errors.js';
import { mapAccount, mapProduct, money } from './map.js';
import { PROBE } from './methods.js';
import type { RawOrder } from './parse.js';
import { fossbillingOperations, fossbillingSetup, type FossbillingOperations } from './operations.js';
import { FOSSBILLING_SERVICE_ACTIONS } from './service-actions.js';
import { createFossbillingTransport, type FossbillingCall, type FossbillingTransport, type TransportOptions } from './transport.js';

export interface FossbillingBackendOptions extends TransportOptions {
  /** Replaces the default transport (a test double). */
  call?: FossbillingCall;
}

export function createFossbillingBackend(config: FossbillingConfig, options: FossbillingBackendOptions = {}): Backend {
  const transport: FossbillingTransport = options.call
    ? { call: options.call, reject: () => undefined, close: () => Promise.resolve() }
    : createFossbillingTransport(config, options);
  const { call, reject } = transport;
  const setup = fossbillingSetup(config);
  const { methods } = setup;
  /** For what is not a customer's call (the catalog; its answer is cached and shared). */
  const shared = fossbillingOperations(setup, (method, params, freshness) => call(method, params, withFreshness(undefined, freshness)), reject);
  /** The operations of one Backend call: their upstream calls carry its context (the trace), and their own freshness. */
  const wholeLists = new WeakMap<CallContext, Map<string, Promise<RawOrder[]>>>();
  const listsOf = (context: CallContext): Map<string, Promise<RawOrder[]>> => {
    let lists = wholeLists.get(context);
    if (!lists) wholeLists.set(context, (lists = new Map()));
    return lists;
  };
  const operations = (context: CallContext | undefined): FossbillingOperations =>
    context === undefined
      ? shared
      : fossbillingOperations(setup, (method, params, freshness) => call(method, params, withFreshness(context, freshness)), reject, listsOf(context));
  const { catalog, publicProduct } = shared;
  /** The shared catalog read keeps its own deadline; a request waits for it until its own (request-deadline.ts, within). */
  const catalogMs = methods['product/get_list'].timeoutMs;

  /**
   * A customer's Backend method, served by the operations of its call (every such method takes the
   * call's context last). A customer without a valid client id is refused before any call is made.
   */
  const forCustomer =
    <A extends unknown[], R>(method: (of: FossbillingOperations) => (customer: Customer, ...args: A) => Promise<R>) =>
    async (customer: Customer, ...args: A): Promise<R> => {
      shared.clientIdOf(customer);
      return method(operations(args[args.length - 1] as CallContext | undefined))(customer, ...args);
    };

  const readMs = Math.max(...(['client/get', 'product/get_list', 'order/get'] as const).map((method) => methods[method].timeoutMs));
  const writeMs = Math.max(...(['order/create', 'order/suspend', 'order/unsuspend', 'order/cancel'] as const).map((method) => methods[method].timeoutMs));

  return {
    name: 'fossbilling',
    // Orders are found again by the key stored in their meta (order/get_list filter).
    capabilities: { serviceActions: FOSSBILLING_SERVICE_ACTIONS, reconcilesOrders: true, cancelOutcome: 'completed' },
    // Reads that check, the write, and the read-back.
    writeTimeoutMs: readMs + writeMs + readMs,
    getAccount: forCustomer(({ client }) => async (customer) => mapAccount(await client(customer), config.defaultCurrency)),
    // FOSSBilling prices are in its default currency (others are converted at order time).
    listProducts: async (ctx) => (await within(catalog(), ctx.deadline, catalogMs)).map((product) => mapProduct(product, config.defaultCurrency)),
    getProduct: async (id, ctx) => {
      const product = await within(publicProduct(id), ctx.deadline, catalogMs);
      if (!product) throw notFound('product');
      return mapProduct(product, config.defaultCurrency);
    },
    placeOrder: forCustomer((of) => of.placeOrder),
    findOrderByIdempotencyKey: forCustomer((of) => of.findOrderByIdempotencyKey),
    getOrder: forCustomer((of) => of.readOrder),
    listServices: forCustomer((of) => of.listServices),
    getService: forCustomer(({ readService }) => (customer, id: string) => readService(customer, id)),
    getCredentials: forCustomer((of) => of.getCredentials),
    runServiceAction: forCustomer((of) => of.runServiceAction),
    getBalance: forCustomer(({ client }) => async (customer) => {
      const account = await client(customer);
      if (account.balance === undefined) throw unreadable(`client/get for ${customer.upstreamId} gave no balance`);
      // null: no balance rows (0.6.x, 0.7.x), no credit.
      return { credit: { amount: money(account.balance), currency: mapAccount(account, config.defaultCurrency).currency } };
    }),
    listInvoices: forCustomer((of) => of.listInvoices),
    getInvoiceDocument: forCustomer((of) => of.getInvoiceDocument),
    diagnose: (scope) => diagnoseFossbilling(config, scope, options),
    ping: () => answersProbe(() => call(PROBE, {}, { waitForConnection: false })),
    close: () => transport.close(),
  };
}
