/**
 * The v1 Backend on top of WHMCS, assembled from its parts by resource (catalog, orders, services,
 * billing) over one client. Every call that can see other clients' data is scoped to the
 * customer's clientid, and every answer is checked again for ownership (see backend-calls.ts).
 */
import type { Dispatcher } from 'undici';
import type { UpstreamHooks } from '../../src/upstream/client.js';
import type { Backend, Customer } from '../../src/backend/backend.js';
import { ALL_ACTIONS, type Product } from '../../src/v1/schemas.js';
import type { ActionTable } from './actions.js';
import { createWhmcsBilling } from './backend-billing.js';
import { createWhmcsCalls, notFound } from './backend-calls.js';
import { createWhmcsCatalog } from './backend-catalog.js';
import { createWhmcsOrders } from './backend-orders.js';
import { createWhmcsServices } from './backend-services.js';
import { createWhmcsClient, type WhmcsLogger } from './client.js';
import type { WhmcsConfig } from './config.js';
import { diagnoseWhmcs } from './doctor.js';
import { mapAccount } from './map.js';

export interface WhmcsBackendOptions {
  /** Replaces the backend's own undici Pool (tests pass a MockAgent); the caller closes it. */
  dispatcher?: Dispatcher;
  logger?: WhmcsLogger;
  /** The clock of the circuit breaker and the answer cache (tests inject one). */
  now?: () => number;
  /** The gateway's metrics observer and trace headers, for the upstream client. */
  hooks?: UpstreamHooks;
}

/**
 * The longest a write operation can run: the reads that check it, its writes, and the read-back.
 * Service actions read cancellation requests in two rounds (first page, then the rest at once).
 * With the circuit breaker on, a write that comes first after it was open waits for a health probe.
 */
function longestWriteOperationMs(actions: ActionTable, acceptsOrders: boolean, breakerProbes: boolean): number {
  const readMs = Math.max(
    ...(['GetProducts', 'GetClientsDetails', 'GetClientsProducts', 'GetCancelledPackages', 'GetOrders'] as const).map(
      (id) => actions[id].timeoutMs,
    ),
  );
  const order = readMs + actions.AddOrder.timeoutMs + (acceptsOrders ? actions.AcceptOrder.timeoutMs : 0) + readMs;
  const serviceWriteMs = Math.max(
    ...(['ModuleCustom', 'ModuleSuspend', 'ModuleUnsuspend', 'ModuleTerminate', 'AddCancelRequest', 'CancelRevoke'] as const).map(
      (id) => actions[id].timeoutMs,
    ),
  );
  const probeMs = breakerProbes ? actions.GetCurrencies.timeoutMs : 0;
  return Math.max(order, 2 * readMs + serviceWriteMs + 2 * readMs) + probeMs;
}

export function createWhmcsBackend(config: WhmcsConfig, options: WhmcsBackendOptions = {}): Backend {
  const client = createWhmcsClient(config, options);
  const calls = createWhmcsCalls(client);
  const catalog = createWhmcsCatalog(calls, config);
  const services = createWhmcsServices(calls, catalog, config);
  const orders = createWhmcsOrders(calls, catalog, services, config, options.logger);
  const billing = createWhmcsBilling(calls, config);

  /** Refuses a customer without a valid clientid before any call is made for it. */
  const forCustomer =
    <A extends unknown[], R>(method: (customer: Customer, ...args: A) => Promise<R>) =>
    async (customer: Customer, ...args: A): Promise<R> => {
      calls.clientIdOf(customer);
      return method(customer, ...args);
    };

  return {
    name: 'whmcs',
    // Orders are found again by the key stored in a product custom field.
    capabilities: { serviceActions: ALL_ACTIONS, reconcilesOrders: true },
    writeTimeoutMs: longestWriteOperationMs(client.actions, config.acceptOrder.enabled, config.circuitBreaker.enabled),
    getAccount: forCustomer(async (customer) => mapAccount(await calls.clientDetails(customer))),
    // Both answer shared, deep-frozen objects (see backend-catalog.ts): callers must not mutate them.
    listProducts: async () => (await catalog.published()).list as Product[],
    getProduct: async (id) => {
      const product = (await catalog.published()).byId.get(id);
      if (!product) throw notFound('product');
      return product;
    },
    placeOrder: forCustomer(orders.placeOrder),
    findOrderByIdempotencyKey: forCustomer(orders.findOrderByIdempotencyKey),
    getOrder: forCustomer((customer, id: string) => orders.readOrder(customer, id)),
    listServices: forCustomer(services.listServices),
    getService: forCustomer(services.readService),
    getCredentials: forCustomer(services.getCredentials),
    runServiceAction: forCustomer(services.runServiceAction),
    getBalance: forCustomer(billing.getBalance),
    listInvoices: forCustomer(billing.listInvoices),
    getInvoiceDocument: forCustomer(billing.getInvoiceDocument),
    diagnose: (scope) => diagnoseWhmcs(config, scope, { dispatcher: options.dispatcher, logger: options.logger, now: options.now }),
    // False at once while the circuit breaker is open (nothing is sent); in half-open, the probe
    // may be the one trial call that closes it.
    ping: async () => {
      try {
        await client.call('GetCurrencies');
        return true;
      } catch {
        return false;
      }
    },
    close: () => client.close(),
  };
}
