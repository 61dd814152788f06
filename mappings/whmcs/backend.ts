/**
 * The v1 Backend on top of WHMCS, assembled from its parts by resource (catalog, orders, services,
 * billing) over one client. Every call that can see other clients' data is scoped to the
 * customer's clientid, and every answer is checked again for ownership (see backend-calls.ts).
 */
import type { Dispatcher } from 'undici';
import { answersProbe } from '../../src/upstream/busy.js';
import type { UpstreamHooks } from '../../src/upstream/observer.js';
import type { Backend, CallContext, Customer } from '../../src/backend/backend.js';
import { ALL_ACTIONS, type Product } from '../../src/v1/schemas.js';
import type { ActionTable } from './actions.js';
import { createWhmcsBilling, type WhmcsBilling } from './backend-billing.js';
import { createWhmcsCalls, notFound, type WhmcsCalls } from './backend-calls.js';
import { catalogUntil, createWhmcsCatalog, type WhmcsCatalog } from './backend-catalog.js';
import { createWhmcsOrders, type WhmcsOrders } from './backend-orders.js';
import { createWhmcsServices, type WhmcsServices } from './backend-services.js';
import { createWhmcsClient, type WhmcsClient, type WhmcsLogger } from './client.js';
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

interface WhmcsModules {
  readonly calls: WhmcsCalls;
  readonly services: WhmcsServices;
  readonly orders: WhmcsOrders;
  readonly billing: WhmcsBilling;
}

/** What every call's modules are made over: the backend's client, catalog and config. */
interface ModuleParts {
  client: WhmcsClient;
  catalog: WhmcsCatalog;
  config: WhmcsConfig;
  logger: WhmcsLogger | undefined;
}

/**
 * The modules of one Backend call, each made when the call first asks for it: `/v1/me` needs only
 * the calls, and making all four (each an object of closures) was about 2 KB a request.
 */
class CallModules implements WhmcsModules {
  private madeCalls: WhmcsCalls | undefined;
  private madeServices: WhmcsServices | undefined;
  private madeOrders: WhmcsOrders | undefined;
  private madeBilling: WhmcsBilling | undefined;

  constructor(
    private readonly parts: ModuleParts,
    private readonly context: CallContext,
  ) {}

  get calls(): WhmcsCalls {
    return (this.madeCalls ??= createWhmcsCalls(this.parts.client, this.context));
  }

  get services(): WhmcsServices {
    return (this.madeServices ??= createWhmcsServices(this.calls, this.catalog, this.parts.config));
  }

  get orders(): WhmcsOrders {
    return (this.madeOrders ??= createWhmcsOrders(this.calls, this.catalog, this.services, this.parts.config, this.parts.logger));
  }

  private get catalog(): WhmcsCatalog {
    return catalogUntil(this.parts.catalog, this.context.deadline);
  }

  get billing(): WhmcsBilling {
    return (this.madeBilling ??= createWhmcsBilling(this.calls, this.parts.config));
  }
}

export function createWhmcsBackend(config: WhmcsConfig, options: WhmcsBackendOptions = {}): Backend {
  const client = createWhmcsClient(config, options);
  const shared = createWhmcsCalls(client);
  const catalog = createWhmcsCatalog(shared, config);

  /**
   * The modules serving one Backend call, their upstream calls made with its context (the trace
   * of the request). They hold no state of their own (the catalog, which caches, is shared), so
   * making those a call needs costs a few closures next to an upstream round trip.
   */
  const parts: ModuleParts = { client, catalog, config, logger: options.logger };
  const modules = (context: CallContext): WhmcsModules => new CallModules(parts, context);

  /**
   * A customer's Backend method, served by the modules of its call (every such method takes the
   * call's context last). A customer without a valid clientid is refused before any call is made.
   */
  const forCustomer =
    <A extends unknown[], R>(method: (of: WhmcsModules) => (customer: Customer, ...args: A) => Promise<R>) =>
    async (customer: Customer, ...args: A): Promise<R> => {
      shared.clientIdOf(customer);
      return method(modules(args[args.length - 1] as CallContext))(customer, ...args);
    };

  return {
    name: 'whmcs',
    // Orders are found again by the key stored in a product custom field.
    capabilities: { serviceActions: ALL_ACTIONS, reconcilesOrders: true, cancelOutcome: 'scheduled' },
    writeTimeoutMs: longestWriteOperationMs(client.actions, config.acceptOrder.enabled, config.circuitBreaker.enabled),
    getAccount: forCustomer(({ calls }) => async (customer) => mapAccount(await calls.clientDetails(customer))),
    // Both answer shared, deep-frozen objects (see backend-catalog.ts): callers must not mutate them.
    listProducts: async (ctx) => (await catalog.published(ctx.deadline)).list as Product[],
    getProduct: async (id, ctx) => {
      const product = (await catalog.published(ctx.deadline)).byId.get(id);
      if (!product) throw notFound('product');
      return product;
    },
    placeOrder: forCustomer(({ orders }) => orders.placeOrder),
    findOrderByIdempotencyKey: forCustomer(({ orders }) => orders.findOrderByIdempotencyKey),
    getOrder: forCustomer(({ orders }) => (customer, id: string) => orders.readOrder(customer, id)),
    listServices: forCustomer(({ services }) => services.listServices),
    getService: forCustomer(({ services }) => services.readService),
    getCredentials: forCustomer(({ services }) => services.getCredentials),
    runServiceAction: forCustomer(({ services }) => services.runServiceAction),
    getBalance: forCustomer(({ billing }) => billing.getBalance),
    listInvoices: forCustomer(({ billing }) => billing.listInvoices),
    getInvoiceDocument: forCustomer(({ billing }) => billing.getInvoiceDocument),
    // The doctor's credentials probe is a login like any call: it waits out the live client's hold,
    // and a refusal it meets counts towards the same ban.
    diagnose: (scope) => diagnoseWhmcs(config, scope, { dispatcher: options.dispatcher, logger: options.logger, now: options.now, credentialHold: client.credentialHold }),
    // False at once while the circuit breaker is open (nothing is sent); in half-open, the probe
    // may be the one trial call that closes it.
    ping: () => answersProbe(() => client.call('GetCurrencies', {}, { waitForConnection: false })),
    close: () => client.close(),
  };
}
