/**
 * AddOrder and AcceptOrder, with WHMCS's silent fallbacks: an invalid or disabled billing cycle
 * becomes the first enabled one, invalid config options become defaults (first visible choice,
 * quantity clamped to min/max), malformed serialized input is ignored.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { isIP } from 'node:net';
import {
  CYCLE_DISPLAY,
  CYCLES,
  EMPTY_DATE,
  SETUP_FEE_KEYS,
  fromCents,
  nextId,
  sqlDate,
  sqlDateTime,
  toCents,
  type Client,
  type ConfigOption,
  type Currency,
  type Cycle,
  type Product,
  type Service,
  type SimulatorState,
} from '../model.js';
import { decodeSerializedArray, type PhpArray, type PhpValue } from '../php-serialize.js';
import { isTruthy, phpInt, scalarParam, type FormArray, type FormValue } from '../protocol.js';
import { applyClientCredit } from './billing.js';
import { type BillingCycle, createOrderInvoice, type InvoiceLine } from './order-invoice.js';
import { provisionService } from './modules.js';
import {
  clientCurrency,
  failure,
  findClient,
  findProduct,
  type ActionHandler,
} from './shared.js';

/** One cart line as sent: `pid[n]` with its `billingcycle[n]`, `configoptions[n]`, … (or the scalar forms). */
interface ItemRequest {
  pid: number;
  billingcycle: string;
  configoptions: string;
  customfields: string;
  hostname: string;
  rootpw: string | undefined;
}

/** A cart line WHMCS accepted, with the values it will store. */
interface CartItem {
  product: Product;
  cycle: BillingCycle;
  configOptionValues: Record<string, number>;
  customFieldValues: Record<string, string>;
  hostname: string;
  rootpw: string | undefined;
  recurringCents: number;
  /** The setup fees (product and options), also part of the first payment. */
  setupCents: number;
  firstPaymentCents: number;
}

function stringAt(value: FormValue | undefined, index: string | undefined): string {
  const entry = index === undefined || typeof value !== 'object' ? value : value[index];
  return typeof entry === 'string' ? entry : '';
}

/**
 * The service's domain, as calcCartTotals (orderfunctions.php) makes it from `domain[n]` and
 * `hostname[n]`: a hostname with two dots or more, or without a domain, replaces the domain; any
 * other hostname is prefixed to it ("vps7" and "example.net" → "vps7.example.net").
 */
function serviceDomain(domain: string, hostname: string): string {
  const host = hostname.replace(/^[ .]+|[ .]+$/g, '');
  if (host === '') return domain;
  return host.split('.').length > 2 || domain === '' ? host : `${host}.${domain}`;
}

function readItemRequests(params: FormArray): ItemRequest[] {
  const pid = params.pid;
  if (pid === undefined) return [];
  const indexes = typeof pid === 'object' ? Object.keys(pid) : [undefined];
  return indexes.map((index) => ({
    pid: phpInt(stringAt(pid, index)),
    billingcycle: stringAt(params.billingcycle, index),
    configoptions: stringAt(params.configoptions, index),
    customfields: stringAt(params.customfields, index),
    hostname: serviceDomain(stringAt(params.domain, index), stringAt(params.hostname, index)),
    rootpw: stringAt(params.rootpw, index) || undefined,
  }));
}

function isEnabled(price: string | undefined): boolean {
  return price !== undefined && toCents(price) >= 0;
}

/** The requested cycle if enabled, else silently the first enabled one (monthly → … → triennially). */
function resolveCycle(product: Product, currency: Currency, requested: string): BillingCycle | undefined {
  if (product.paytype !== 'recurring') return product.paytype;
  const pricing = product.pricing[currency.code];
  if (!pricing) return undefined;
  const wanted = CYCLES.find((cycle) => cycle === requested.toLowerCase());
  if (wanted && isEnabled(pricing[wanted])) return wanted;
  return CYCLES.find((cycle) => isEnabled(pricing[cycle]));
}

/** Onetime and free products keep their price in the monthly column. */
function pricingCycle(cycle: BillingCycle): Cycle {
  return cycle === 'onetime' || cycle === 'free' ? 'monthly' : cycle;
}

function numericValue(value: PhpValue | undefined): number | undefined {
  if (typeof value === 'number') return Math.trunc(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string' && /^\s*[+-]?\d+/.test(value)) return phpInt(value);
  return undefined;
}

function chooseOptionValue(option: ConfigOption, requested: PhpValue | undefined): number {
  const value = numericValue(requested);
  switch (option.type) {
    case '1':
    case '2': {
      // API orders run as admin, so hidden choices are accepted; unknown ids fall back to the first visible one.
      const valid = option.choices.some((choice) => choice.id === value);
      return valid && value !== undefined ? value : (option.choices.find((choice) => !choice.hidden)?.id ?? 0);
    }
    case '3':
      return value !== undefined && value !== 0 ? 1 : 0;
    case '4': {
      const max = option.maxqty > 0 ? option.maxqty : Number.MAX_SAFE_INTEGER;
      return Math.min(Math.max(value ?? option.minqty, option.minqty), max);
    }
  }
}

function selectConfigOptions(state: SimulatorState, product: Product, serialized: string): Record<string, number> {
  const requested: PhpArray = decodeSerializedArray(serialized) ?? new Map();
  const values: Record<string, number> = {};
  for (const option of state.configOptions.filter((row) => product.configOptionIds.includes(row.id))) {
    values[option.id] = chooseOptionValue(option, requested.get(String(option.id)));
  }
  return values;
}

function selectCustomFields(state: SimulatorState, product: Product, serialized: string): Record<string, string> {
  const requested: PhpArray = decodeSerializedArray(serialized) ?? new Map();
  const values: Record<string, string> = {};
  for (const field of state.customFields.filter((row) => row.productId === product.pid)) {
    const value = requested.get(String(field.id));
    values[field.id] = typeof value === 'string' || typeof value === 'number' ? String(value) : '';
  }
  return values;
}

/** Price and setup fee of the product plus its selected options, in cents. */
function priceCart(
  state: SimulatorState,
  product: Product,
  cycle: BillingCycle,
  currency: Currency,
  options: Record<string, number>,
): { recurring: number; setup: number } {
  if (cycle === 'free') return { recurring: 0, setup: 0 };
  const column = pricingCycle(cycle);
  const productRow = product.pricing[currency.code];
  let recurring = toCents(productRow?.[column] ?? '0.00');
  let setup = toCents(productRow?.[SETUP_FEE_KEYS[column]] ?? '0.00');
  for (const option of state.configOptions.filter((row) => row.id in options)) {
    const selected = options[option.id] ?? 0;
    const isChoice = option.type === '1' || option.type === '2';
    const choice = isChoice ? option.choices.find((row) => row.id === selected) : option.choices[0];
    const units = isChoice ? 1 : selected;
    const choiceRow = choice?.pricing[currency.code];
    recurring += units * toCents(choiceRow?.[column] ?? '0.00');
    setup += units * toCents(choiceRow?.[SETUP_FEE_KEYS[column]] ?? '0.00');
  }
  return { recurring, setup };
}

function toCartItem(state: SimulatorState, currency: Currency, request: ItemRequest): CartItem | undefined {
  const product = findProduct(state, request.pid);
  if (!product) return undefined;
  const cycle = resolveCycle(product, currency, request.billingcycle);
  if (!cycle) return undefined;
  const configOptionValues = selectConfigOptions(state, product, request.configoptions);
  const { recurring, setup } = priceCart(state, product, cycle, currency, configOptionValues);
  return {
    product,
    cycle,
    configOptionValues,
    customFieldValues: selectCustomFields(state, product, request.customfields),
    hostname: request.hostname,
    rootpw: request.rootpw,
    recurringCents: cycle === 'onetime' ? 0 : recurring,
    setupCents: setup,
    firstPaymentCents: recurring + setup,
  };
}

function serverFor(state: SimulatorState, module: string): number {
  return module === '' ? 0 : (state.servers.find((server) => server.module === module)?.id ?? 0);
}

function createService(state: SimulatorState, client: Client, orderId: number, item: CartItem, paymentmethod: string, now: Date): Service {
  const recurring = item.cycle !== 'onetime' && item.cycle !== 'free';
  const service: Service = {
    id: nextId(state.services),
    clientId: client.id,
    orderId,
    pid: item.product.pid,
    serverId: serverFor(state, item.product.module),
    regdate: sqlDate(now),
    domain: item.hostname,
    dedicatedip: '',
    assignedips: '',
    status: 'Pending',
    suspensionreason: '',
    firstpaymentamount: fromCents(item.firstPaymentCents),
    recurringamount: fromCents(item.recurringCents),
    paymentmethod,
    billingcycle: CYCLE_DISPLAY[item.cycle],
    nextduedate: recurring ? sqlDate(now) : EMPTY_DATE,
    username: item.product.type === 'server' ? 'root' : '',
    password: item.rootpw ?? randomBytes(12).toString('base64url'),
    notes: '',
    power: 'off',
    customFieldValues: item.customFieldValues,
    configOptionValues: item.configOptionValues,
  };
  state.services.push(service);
  return service;
}

/** The checks AddOrder makes on the client and request before looking at the cart; the error message, if any. */
function orderRefusal(state: SimulatorState, client: Client, params: FormArray): string | undefined {
  if (client.status === 'Closed') return 'Unable to add order when client status is Closed';
  const active = state.paymentMethods.filter((method) => method.active).map((method) => method.module);
  if (!active.includes(scalarParam(params, 'paymentmethod') ?? '')) return `Invalid Payment Method. Valid options include ${active.join(',')}`;
  const clientIp = scalarParam(params, 'clientip');
  if (clientIp && isIP(clientIp) === 0) return "Invalid IP address provided for 'clientip'";
  if (typeof params.pid === 'object' && typeof params.domain === 'string') return "Expecting parameter 'domain' to be an array";
  return undefined;
}

export const addOrder: ActionHandler = ({ params, state, now }) => {
  const client = findClient(state, phpInt(params.clientid));
  if (!client) return failure('Client ID Not Found');
  const refusal = orderRefusal(state, client, params);
  if (refusal) return failure(refusal);
  const requests = readItemRequests(params);
  if (requests.length === 0) return failure('No items added to cart so order cannot proceed');
  const currency = clientCurrency(state, client);
  const cart = currency ? requests.flatMap((request) => toCartItem(state, currency, request) ?? []) : [];
  if (cart.length === 0) return failure('No items remain in the cart. Order cannot proceed.');

  const paymentmethod = scalarParam(params, 'paymentmethod') ?? '';
  const orderId = nextId(state.orders);
  const lines = cart.map((item): InvoiceLine => ({ ...item, service: createService(state, client, orderId, item, paymentmethod, now) }));
  const invoice = isTruthy(params.noinvoice) ? undefined : createOrderInvoice(state, client, lines, paymentmethod, now);
  state.orders.push({
    id: orderId,
    ordernum: randomInt(1_000_000_000, 9_999_999_999),
    clientId: client.id,
    date: sqlDateTime(now),
    amount: fromCents(cart.reduce((sum, item) => sum + item.firstPaymentCents, 0)),
    paymentmethod,
    invoiceId: invoice?.id ?? 0,
    status: 'Pending',
    promocode: '', // promocode is accepted and ignored
    ipaddress: scalarParam(params, 'clientip') ?? '',
    notes: '',
  });
  if (invoice && state.settings.autoApplyCredit) applyClientCredit(state, invoice, now);

  const serviceIds = lines.map(({ service }) => service.id).join(',');
  return {
    result: 'success',
    orderid: String(orderId),
    serviceids: serviceIds,
    productids: serviceIds, // legacy name, same value
    addonids: '',
    domainids: '',
    // From tblorders.invoiceid when no invoice was made (a free order): "0".
    invoiceid: isTruthy(params.noinvoice) ? undefined : String(invoice?.id ?? 0),
  };
};

export const acceptOrder: ActionHandler = ({ params, state }) => {
  const order = state.orders.find((row) => row.id === phpInt(params.orderid));
  if (!order || order.status !== 'Pending') return failure('Order ID not found or Status not Pending');
  const autosetup = isTruthy(params.autosetup);
  for (const service of state.services.filter((row) => row.orderId === order.id && row.status === 'Pending')) {
    if (autosetup) provisionService(state, service, params);
    service.status = 'Active';
  }
  order.status = 'Active';
  return { result: 'success' };
};
