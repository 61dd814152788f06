/**
 * The v1 Backend on top of WHMCS. Every call that can see other clients' data is scoped to the
 * customer's clientid, and every answer is checked again for ownership: WHMCS answers with all
 * clients' records when a filter is missing, and some actions take no owner filter at all.
 */
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import {
  type Backend,
  BackendError,
  type CallContext,
  type Customer,
  type OrderKeyContext,
  type OrderSearch,
  type WriteContext,
} from '../../src/backend/backend.js';
import { ALL_ACTIONS, type Order, type OrderInput, type PageRequest, type Product, type Service, type ServiceAction } from '../../src/v1/schemas.js';
import type { ActionId, ActionTable } from './actions.js';
import { createWhmcsClient, type FormParams, UpstreamBusinessError, type WhmcsLogger } from './client.js';
import type { WhmcsConfig } from './config.js';
import { diagnoseWhmcs } from './doctor.js';
import { mapAccount, mapCredentials, mapInvoice, mapInvoiceDocument, mapOrder, mapProduct, mapService } from './map.js';
import { validateOrder } from './orders.js';
import {
  AddOrderAnswer,
  CancellationsAnswer,
  ClientDetailsAnswer,
  describeIssues,
  InvoiceAnswer,
  InvoicesAnswer,
  OrdersAnswer,
  ProductsAnswer,
  type RawCancellationRequest,
  type RawClient,
  type RawProduct,
  type RawService,
  ServicesAnswer,
} from './parse.js';
import { encodePhpArray } from './php-serialize.js';
import { cancellationPending, noCancellationPending, planServiceAction, unsupported } from './service-actions.js';

export interface WhmcsBackendOptions {
  /** Replaces the backend's own undici Pool (tests pass a MockAgent); the caller closes it. */
  dispatcher?: Dispatcher;
  logger?: WhmcsLogger;
  /** The circuit breaker's clock (tests inject one). */
  now?: () => number;
}

/** Services read per page when searching a client's services for an order key (all pages are read). */
const SERVICE_SCAN_PAGE = 100;
/** GetCancelledPackages rows per page (the table is never pruned, so it only grows). */
const CANCELLATIONS_PAGE = 1000;
/** Beyond this, reading every request on each service read is too costly (and a hostile total is refused). */
const CANCELLATIONS_MAX_PAGES = 20;

const IS_ID = /^[1-9][0-9]{0,17}$/;

interface ErrorRule {
  match: RegExp;
  error: (cause: UpstreamBusinessError) => BackendError;
}

/** Turns the WHMCS error messages a call is known to give into the right kind of failure. */
async function classified<T>(work: Promise<T>, rules: readonly ErrorRule[]): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof UpstreamBusinessError) {
      const rule = rules.find(({ match }) => match.test(error.upstreamMessage));
      if (rule) throw rule.error(error);
    }
    throw error;
  }
}

/** Once a write has succeeded, any later failure leaves its effect in place: say so. */
async function afterWrite<T>(work: Promise<T>, what: string): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (!(error instanceof BackendError)) throw error;
    throw new BackendError(error.kind, error.detail, {
      operatorMessage: `${error.operatorMessage ?? error.detail} (after ${what} had succeeded)`,
      outcomeUnknown: true,
      ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
      cause: error,
    });
  }
}

/**
 * One GetProducts answer, parsed, and its public products mapped to v1 (on first use). Lives as
 * long as the client caches that answer object, so every cache hit returns the same v1 objects.
 */
interface Catalog {
  products: RawProduct[];
  published?: PublishedCatalog;
}

/** The public products as v1 objects, deep-frozen: shared by every caller, never to be mutated. */
interface PublishedCatalog {
  list: readonly Product[];
  byId: ReadonlyMap<string, Product>;
}

/** Freezes a freshly mapped value and everything in it (plain objects and arrays only). */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

function notFound(what: string): BackendError {
  return new BackendError('not_found', `No such ${what}.`);
}

/** An answer that does not fit the request: an upstream error, explained to the operator only. */
function unreadableAnswer(operatorMessage: string, outcomeUnknown = false): BackendError {
  return new BackendError('upstream_error', 'The billing system answered with something unreadable.', { operatorMessage, outcomeUnknown });
}

/** The account maps to a clientid that WHMCS does not know. */
function unknownClient(customer: Customer, cause: UpstreamBusinessError): BackendError {
  return new BackendError('upstream_error', 'The account is not set up correctly.', {
    operatorMessage: `account ${customer.accountId} maps to WHMCS client ${customer.upstreamId}, which WHMCS does not know`,
    cause,
  });
}

const sameName = (left: string, right: string): boolean => left.trim().toLowerCase() === right.trim().toLowerCase();

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
  const logger = options.logger;
  const publicProductIds = new Set(config.publicProductIds);
  // The catalog answer is cached by the client; parse (and map) each answer object once.
  const catalogs = new WeakMap<object, Catalog>();

  // ---- calls and answers ----------------------------------------------------------------

  function parse<S extends z.ZodType>(id: ActionId, answer: unknown, schema: S): z.output<S> {
    const result = schema.safeParse(answer);
    if (result.success) return result.data;
    const action = client.actions[id];
    throw unreadableAnswer(
      `WHMCS ${action.name} answer has an unexpected shape: ${describeIssues(result.error.issues)}`,
      action.safety === 'write',
    );
  }

  /** A field the schema leaves optional because only some requests read it (see parse.ts): this one does. */
  function needed<T>(id: ActionId, field: string, value: T | undefined): T {
    if (value !== undefined) return value;
    throw unreadableAnswer(`WHMCS ${client.actions[id].name} answer has no ${field}, which this request needs`);
  }

  async function request<S extends z.ZodType>(id: ActionId, params: FormParams, schema: S): Promise<z.output<S>> {
    return parse(id, await client.call(id, params), schema);
  }

  /** The customer's clientid; without a valid one, WHMCS would answer with every client's data. */
  function clientIdOf(customer: Customer): string {
    if (IS_ID.test(customer.upstreamId)) return customer.upstreamId;
    throw new BackendError('upstream_error', 'The account is not set up correctly.', {
      operatorMessage: `account ${customer.accountId} maps to "${customer.upstreamId}", which is not a WHMCS clientid`,
    });
  }

  /**
   * Rows must belong to the customer even though the call was filtered: never leak another client's.
   * For one record asked for by id (`single` names it), the caller gets what another account's
   * record always is, not found (a 502 would tell the id exists); a listing cannot be trusted at all.
   */
  function assertOwned(id: ActionId, customer: Customer, owners: readonly string[], single?: string): void {
    if (owners.every((owner) => owner === customer.upstreamId)) return;
    const operatorMessage = `WHMCS ${client.actions[id].name} returned records of another client than ${customer.upstreamId}; the owner filter was ignored`;
    if (single !== undefined) throw new BackendError('not_found', `No such ${single}.`, { operatorMessage });
    throw unreadableAnswer(operatorMessage);
  }

  // ---- shared reads ---------------------------------------------------------------------

  async function clientDetails(customer: Customer): Promise<RawClient> {
    return classified(request('GetClientsDetails', { clientid: clientIdOf(customer) }, ClientDetailsAnswer), [
      { match: /client not found/i, error: (cause) => unknownClient(customer, cause) },
    ]);
  }

  async function currentCatalog(): Promise<Catalog> {
    const answer = await client.call('GetProducts');
    let entry = catalogs.get(answer);
    if (!entry) {
      entry = { products: parse('GetProducts', answer, ProductsAnswer) };
      catalogs.set(answer, entry);
    }
    return entry;
  }

  /** Every product, hidden and retired ones included (WHMCS cannot tell them apart). */
  async function catalog(): Promise<RawProduct[]> {
    return (await currentCatalog()).products;
  }

  async function publicProduct(id: string): Promise<RawProduct | undefined> {
    return publicProductIds.has(id) ? (await catalog()).find((product) => product.pid === id) : undefined;
  }

  /**
   * The allow-listed products as v1 objects, mapped once per catalog answer (not per request):
   * the same frozen objects are returned until the cached answer is replaced.
   */
  async function published(): Promise<PublishedCatalog> {
    const entry = await currentCatalog();
    if (!entry.published) {
      const list = entry.products.filter((product) => publicProductIds.has(product.pid)).map(mapProduct);
      const byId = new Map<string, Product>();
      // The first of duplicate ids wins, as a lookup in the catalog would find it.
      for (const product of list) if (!byId.has(product.id)) byId.set(product.id, product);
      entry.published = { list: deepFreeze(list), byId };
    }
    return entry.published;
  }

  /** Service id → its cancellation request. WHMCS offers no filter, so all pages are read (cached briefly). */
  async function cancellationRequests(): Promise<Map<string, RawCancellationRequest>> {
    const requests = new Map<string, RawCancellationRequest>();
    if (!config.trackCancellations) return requests;
    const page = (limitstart: number) =>
      request('GetCancelledPackages', { limitstart, limitnum: CANCELLATIONS_PAGE }, CancellationsAnswer);
    const first = await page(0);
    if (first.totalresults > CANCELLATIONS_PAGE * CANCELLATIONS_MAX_PAGES) {
      throw unreadableAnswer(
        `WHMCS lists ${first.totalresults} cancellation requests, more than the ${CANCELLATIONS_PAGE * CANCELLATIONS_MAX_PAGES} the gateway reads; prune tblcancelrequests or set trackCancellations to false`,
      );
    }
    const rest = [];
    for (let start = CANCELLATIONS_PAGE; start < first.totalresults; start += CANCELLATIONS_PAGE) rest.push(page(start));
    for (const answer of [first, ...(await Promise.all(rest))]) {
      for (const row of answer.packages) requests.set(row.relid, row);
    }
    return requests;
  }

  async function servicePage(customer: Customer, params: FormParams, single?: 'service'): Promise<{ services: RawService[]; total: number }> {
    const answer = await request('GetClientsProducts', { clientid: clientIdOf(customer), ...params }, ServicesAnswer);
    assertOwned('GetClientsProducts', customer, answer.products.map((service) => service.clientid), single);
    return { services: answer.products, total: answer.totalresults };
  }

  async function rawService(customer: Customer, id: string): Promise<RawService> {
    if (!IS_ID.test(id)) throw notFound('service');
    const { services } = await servicePage(customer, { serviceid: id, limitstart: 0, limitnum: 1 }, 'service');
    const service = services.find((candidate) => candidate.id === id);
    if (!service) throw notFound('service');
    return service;
  }

  async function readService(customer: Customer, id: string): Promise<Service> {
    const [service, account, cancellations] = await Promise.all([rawService(customer, id), clientDetails(customer), cancellationRequests()]);
    return mapService(service, account.currency_code, cancellations.get(service.id));
  }

  async function readOrder(customer: Customer, id: string, currency?: string): Promise<Order> {
    if (!IS_ID.test(id)) throw notFound('order');
    // id and userid are ANDed: another client's order is simply not found.
    const [answer, orderCurrency] = await Promise.all([
      request('GetOrders', { id, userid: clientIdOf(customer), limitstart: 0, limitnum: 1 }, OrdersAnswer),
      currency ?? clientDetails(customer).then((account) => account.currency_code),
    ]);
    assertOwned('GetOrders', customer, answer.orders.map((order) => order.userid), 'order');
    const order = answer.orders.find((candidate) => candidate.id === id);
    if (!order) throw notFound('order');
    return mapOrder(order, orderCurrency, config.timeZone);
  }

  // ---- orders ---------------------------------------------------------------------------

  /** The product custom field that stores the order key: configured id, else found by name. */
  function orderKeyFieldId(product: RawProduct): string | undefined {
    const configured = config.orderKeyField.ids[product.pid];
    if (configured !== undefined) return String(configured);
    return product.customfields.find((field) => sameName(field.name, config.orderKeyField.name))?.id;
  }

  /**
   * Idempotency keys are per account (several accounts could share one WHMCS client), and the
   * record id ties the tag to one use of the key: a key reused after its record expired never
   * matches the first use's order.
   */
  const orderKeyTag = (customer: Customer, ctx: OrderKeyContext): string =>
    `${customer.accountId}:${ctx.idempotencyKey}:${ctx.idempotencyRecord}`;

  /** The service's value of the order key field; undefined when the answer does not show that field. */
  function orderKeyValue(service: RawService): string | undefined {
    const configured = config.orderKeyField.ids[service.pid];
    return service.customfields.find((field) =>
      configured !== undefined ? field.id === String(configured) : sameName(field.name, config.orderKeyField.name),
    )?.value;
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
      logger?.error({ requestId: ctx.requestId, orderId: orderid, error: reason }, 'WHMCS AcceptOrder failed; the order stays pending');
    }
  }

  async function placeOrder(
    customer: Customer,
    input: OrderInput,
    ctx: OrderKeyContext & WriteContext,
  ): Promise<Order> {
    const [product, account] = await Promise.all([publicProduct(input.product_id), clientDetails(customer)]);
    if (!product) throw new BackendError('validation', `product_id: there is no product ${input.product_id}.`);
    if (account.status === 'closed') throw new BackendError('validation', 'The account is closed and cannot place orders.');
    const configOptions = validateOrder(product, input, account.currency_code);
    const keyFieldId = orderKeyFieldId(product);
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
        hostname: input.hostname === undefined ? undefined : [input.hostname],
        domain: input.hostname === undefined ? undefined : [input.hostname],
        noemail: true,
      }),
      addOrderErrors(customer),
    );
    const placed = parse('AddOrder', answer, AddOrderAnswer);
    if (config.acceptOrder.enabled) await acceptOrder(placed.orderid, ctx);
    return afterWrite(readOrder(customer, placed.orderid, account.currency_code), `AddOrder (order ${placed.orderid})`);
  }

  /** Why a read failed, for the operator's log. */
  const failure = (error: unknown): string =>
    error instanceof BackendError ? (error.operatorMessage ?? error.detail) : error instanceof Error ? error.message : String(error);

  async function orderOfService(customer: Customer, service: RawService): Promise<OrderSearch> {
    if (!service.orderid) return { kind: 'unknown', reason: `WHMCS service ${service.id} carries the order key but no order id` };
    try {
      return { kind: 'found', order: await readOrder(customer, service.orderid) };
    } catch (error) {
      return { kind: 'unknown', reason: `order ${service.orderid} carries the order key but could not be read: ${failure(error)}` };
    }
  }

  /**
   * Proof of absence or nothing: every page of the client's services is read, and every service
   * of a product with the key field must show that field's value.
   */
  async function findOrderByIdempotencyKey(customer: Customer, ctx: OrderKeyContext): Promise<OrderSearch> {
    const unknown = (reason: string): OrderSearch => ({ kind: 'unknown', reason: `order key search for client ${customer.upstreamId}: ${reason}` });
    let products: RawProduct[];
    try {
      products = await catalog();
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
        page = await servicePage(customer, { limitstart, limitnum: SERVICE_SCAN_PAGE });
      } catch (error) {
        return unknown(`reading services at offset ${limitstart} failed: ${failure(error)}`);
      }
      if (total !== undefined && page.total !== total) return unknown(`the service count changed during the search (${total}, then ${page.total})`);
      total = page.total;
      if (page.services.length === 0 && limitstart < total) return unknown(`GetClientsProducts answered no services at offset ${limitstart} of ${total}`);
      for (const service of page.services) {
        seen.add(service.id);
        const value = orderKeyValue(service);
        if (value === tag) return orderOfService(customer, service);
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

  // ---- services -------------------------------------------------------------------------

  async function listServices(customer: Customer, page: PageRequest) {
    const [{ services, total }, account, cancellations] = await Promise.all([
      // WHMCS returns every row when limitnum is missing: always send it.
      servicePage(customer, { limitstart: (page.page - 1) * page.perPage, limitnum: page.perPage }),
      clientDetails(customer),
      cancellationRequests(),
    ]);
    return { items: services.map((service) => mapService(service, account.currency_code, cancellations.get(service.id))), total };
  }

  const serviceActionErrors = (action: ServiceAction): ErrorRule[] => [
    { match: /service id not found/i, error: () => notFound('service') },
    { match: /not assigned to a module/i, error: () => unsupported(action) },
    { match: /existing cancellation request/i, error: cancellationPending },
    { match: /no cancellation request/i, error: noCancellationPending },
    {
      match: /function not found in module/i,
      error: (cause) =>
        new BackendError('upstream_error', 'The service action failed in the billing system.', {
          operatorMessage: `moduleFunctions allows "${action}" but the WHMCS module has no such function: ${cause.upstreamMessage}`,
          cause,
        }),
    },
    {
      match: /invalid api action/i,
      error: (cause) =>
        new BackendError('upstream_error', 'The service action failed in the billing system.', {
          operatorMessage: `install the custom WHMCS API action "${config.cancelRevokeAction}" and allow it in the gateway's API role: ${cause.upstreamMessage}`,
          cause,
        }),
    },
  ];

  async function runServiceAction(customer: Customer, id: string, action: ServiceAction, ctx: WriteContext) {
    const [service, account, cancellations, products] = await Promise.all([
      rawService(customer, id),
      clientDetails(customer),
      cancellationRequests(),
      catalog(),
    ]);
    const current = mapService(service, account.currency_code, cancellations.get(service.id));
    // The module comes from the product, hidden products included.
    const product = products.find((candidate) => candidate.pid === service.pid);
    const module = product ? needed('GetProducts', 'products.product[].module', product.module) : '';
    const plan = planServiceAction(
      action,
      { id: service.id, status: current.status, cancellationPending: current.cancellation_requested, module },
      config,
    );
    await ctx.beforeWrite();
    await classified(client.call(plan.action, plan.params), serviceActionErrors(action));
    const after = await afterWrite(readService(customer, id), `${client.actions[plan.action].name} (service ${id})`);
    const effectiveOn = plan.outcome === 'scheduled' ? (after.cancellation_effective_on ?? current.next_due_on) : null;
    return { action, outcome: plan.outcome, effective_on: effectiveOn, service: after };
  }

  // ---- billing --------------------------------------------------------------------------

  async function listInvoices(customer: Customer, page: PageRequest) {
    const answer = await request(
      'GetInvoices',
      // Without userid, WHMCS lists every client's invoices.
      { userid: clientIdOf(customer), limitstart: (page.page - 1) * page.perPage, limitnum: page.perPage, orderby: 'id', order: 'desc' },
      InvoicesAnswer,
    );
    assertOwned('GetInvoices', customer, answer.invoices.map((invoice) => invoice.userid));
    // Older WHMCS versions give no currency per invoice: then it is the client's.
    const needsClientCurrency = answer.invoices.some((invoice) => invoice.currencycode === undefined);
    const clientCurrency = needsClientCurrency ? (await clientDetails(customer)).currency_code : '';
    return { items: answer.invoices.map((invoice) => mapInvoice(invoice, clientCurrency, config.timeZone)), total: answer.totalresults };
  }

  async function getInvoiceDocument(customer: Customer, id: string) {
    if (!IS_ID.test(id)) throw notFound('invoice');
    const [invoice, account] = await Promise.all([
      // GetInvoice answers "not found" with `status: "error"`.
      classified(request('GetInvoice', { invoiceid: id }, InvoiceAnswer), [{ match: /not found/i, error: () => notFound('invoice') }]),
      clientDetails(customer),
    ]);
    // GetInvoice takes no owner filter: another client's invoice is checked here.
    if (invoice.userid !== customer.upstreamId || invoice.invoiceid !== id) throw notFound('invoice');
    return mapInvoiceDocument(invoice, account, config.timeZone);
  }

  /** Refuses a customer without a valid clientid before any call is made for it. */
  const forCustomer =
    <A extends unknown[], R>(method: (customer: Customer, ...args: A) => Promise<R>) =>
    async (customer: Customer, ...args: A): Promise<R> => {
      clientIdOf(customer);
      return method(customer, ...args);
    };

  return {
    name: 'whmcs',
    // Orders are found again by the key stored in a product custom field.
    capabilities: { serviceActions: ALL_ACTIONS, reconcilesOrders: true },
    writeTimeoutMs: longestWriteOperationMs(client.actions, config.acceptOrder.enabled, config.circuitBreaker.enabled),
    getAccount: forCustomer(async (customer) => mapAccount(await clientDetails(customer))),
    // Both answer shared, deep-frozen objects (see published()): callers must not mutate them.
    listProducts: async () => (await published()).list as Product[],
    getProduct: async (id) => {
      const product = (await published()).byId.get(id);
      if (!product) throw notFound('product');
      return product;
    },
    placeOrder: forCustomer(placeOrder),
    findOrderByIdempotencyKey: forCustomer(findOrderByIdempotencyKey),
    getOrder: forCustomer((customer, id: string) => readOrder(customer, id)),
    listServices: forCustomer(listServices),
    getService: forCustomer((customer, id: string) => readService(customer, id)),
    getCredentials: forCustomer(async (customer, id: string) => {
      const service = await rawService(customer, id);
      const field = (name: string) => `products.product[].${name}`;
      const username = needed('GetClientsProducts', field('username'), service.username);
      return mapCredentials(service, username, needed('GetClientsProducts', field('password'), service.password));
    }),
    runServiceAction: forCustomer(runServiceAction),
    getBalance: forCustomer(async (customer) => {
      const account = await clientDetails(customer);
      return { credit: { amount: needed('GetClientsDetails', 'client.credit (or, without client, credit)', account.credit), currency: account.currency_code } };
    }),
    listInvoices: forCustomer(listInvoices),
    getInvoiceDocument: forCustomer(getInvoiceDocument),
    diagnose: (scope) => diagnoseWhmcs(config, scope, { dispatcher: options.dispatcher, logger, now: options.now }),
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
