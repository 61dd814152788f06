/**
 * FOSSBilling records → v1 resources. An order IS the service in FOSSBilling, so one order record
 * gives both the v1 order and the v1 service (same id).
 */
import { addressLines } from '../../src/backend/address.js';
import { ownEntry } from '../../src/own-entry.js';
import { BackendError } from '../../src/backend/backend.js';
import { multiplyDecimals, roundDecimal } from '../../src/backend/decimal.js';
import { isRealLocalTime, localToUtc } from '../../src/backend/time-zone.js';
import type {
  Account,
  BillingCycle,
  Credentials,
  Invoice,
  InvoiceDocument,
  Order,
  Price,
  Product,
  Service,
  ServiceBillingCycle,
  ServiceStatus,
} from '../../src/v1/schemas.js';
import { hostnameOf } from './order-hostname.js';
import { type OrderInvoice, unpaidInvoiceOf } from './order-invoice.js';
import type { RawClient, RawInvoice, RawOrder, RawProduct } from './parse.js';

/** FOSSBilling period codes (src/library/FOSSBilling/Period.php) that have a v1 billing cycle. */
export const PERIOD_OF_CYCLE: Readonly<Partial<Record<BillingCycle, string>>> = {
  monthly: '1M',
  quarterly: '3M',
  semiannually: '6M',
  annually: '1Y',
  biennially: '2Y',
  triennially: '3Y',
};
const CYCLE_OF_PERIOD = new Map(Object.entries(PERIOD_OF_CYCLE).map(([cycle, period]) => [period, cycle as BillingCycle]));

/** Order statuses (src/modules/Order/Entity/Order.php) → v1 service status. Anything else is refused. */
export const SERVICE_STATUS: Readonly<Record<string, ServiceStatus>> = {
  pending_setup: 'pending',
  failed_setup: 'pending',
  active: 'active',
  // Renewal failed, but the service keeps running until it is suspended (statusOf: one never activated is not running).
  failed_renew: 'active',
  suspended: 'suspended',
  canceled: 'cancelled',
};

/** The same statuses seen as an order; `other` is the explicit bucket for anything unknown. */
export const ORDER_STATUS: Readonly<Record<string, Order['status']>> = {
  pending_setup: 'pending',
  // Its setup failed: not fulfilled yet, like its service (pending); `other` is for invented statuses.
  failed_setup: 'pending',
  active: 'active',
  failed_renew: 'active',
  suspended: 'active',
  canceled: 'cancelled',
};

/**
 * The status to map. Paying the invoice of an order placed through the admin API runs its line's
 * task, `renew` (Invoice/Service.php generateForOrder), on an order never activated: no service
 * to renew, so `failed_renew` (Order/Service.php renewFromOrder). Only activation sets
 * `activated_at`: without it the order waits for setup, like `failed_setup`.
 */
export function statusOf(order: RawOrder): string {
  return order.status === 'failed_renew' && order.activated_at === null ? 'failed_setup' : order.status;
}

function unreadable(operatorMessage: string): BackendError {
  return new BackendError('upstream_error', 'The billing system answered with something unreadable.', { operatorMessage });
}

/** FOSSBilling's currencies all have two decimals: its stored prices come as DECIMAL text such as "4.99". */
const CURRENCY_DECIMALS = 2;

/**
 * An amount (parse.ts's decimal text) in the currency's decimals. FOSSBilling gives DECIMAL strings,
 * ints, and PHP floats whose text carries binary noise ("59.699999999999996"): rounded as PHP's
 * round() would.
 */
export function money(value: string | null | undefined): string {
  return roundDecimal(value ?? '0', CURRENCY_DECIMALS);
}

/** A tax rate is a percentage, not money: kept as precise as given, with at least two decimals. */
function taxRate(rate: string): string {
  // Fewer than two decimals are only padded.
  return /^-?\d+\.\d{2,}$/.test(rate) ? rate : roundDecimal(rate, 2);
}

function currencyOf(code: string | null, fallback: string): string {
  return code && /^[A-Z]{3}$/.test(code) ? code : fallback;
}

const LOCAL = /^(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2}):(\d{2}))?$/;

/** "YYYY-MM-DD" of a FOSSBilling date-time, or null. */
export function dateOf(value: string | null): string | null {
  const match = value === null ? null : LOCAL.exec(value);
  return match ? `${match[1]}-${match[2]}-${match[3]}` : null;
}

/** A FOSSBilling server-local "YYYY-MM-DD HH:MM:SS" as RFC 3339 UTC; null when it is no real time. */
export function utcOf(value: string | null, timeZone: string): string | null {
  const match = value === null ? null : LOCAL.exec(value);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number, number, number];
  const local = { year, month, day, hour, minute, second };
  return isRealLocalTime(local) ? localToUtc(local, timeZone) : null;
}

export function mapAccount(client: RawClient, defaultCurrency: string): Omit<Account, 'id'> {
  const name = [client.first_name, client.last_name].filter((part) => part).join(' ');
  const status = client.status === 'canceled' ? 'closed' : client.status === 'suspended' ? 'inactive' : 'active';
  return { name, company: client.company || null, email: client.email, status, currency: currencyOf(client.currency, defaultCurrency) };
}

/** The product's prices in the given currency (FOSSBilling prices are in its default currency). */
export function productPrices(product: RawProduct, currency: string): Price[] {
  const { pricing } = product;
  switch (pricing.type) {
    case 'free':
      return [{ currency, billing_cycle: 'free', price: '0.00', setup_fee: '0.00' }];
    case 'once':
      return [{ currency, billing_cycle: 'onetime', price: money(pricing.once?.price), setup_fee: money(pricing.once?.setup) }];
    case 'recurrent': {
      const periods = Array.isArray(pricing.recurrent) ? {} : (pricing.recurrent ?? {});
      return Object.entries(periods).flatMap(([period, entry]) => {
        const cycle = CYCLE_OF_PERIOD.get(period);
        // Weekly, 4- and 5-yearly periods have no v1 billing cycle: they are not offered through v1.
        if (!cycle || !entry.enabled) return [];
        return [{ currency, billing_cycle: cycle, price: money(entry.price), setup_fee: money(entry.setup) }];
      });
    }
    default:
      return [];
  }
}

export const PAY_TYPES: Readonly<Record<string, Product['pay_type']>> = { free: 'free', once: 'onetime', recurrent: 'recurring' };

export function mapProduct(product: RawProduct, currency: string): Product {
  return {
    id: product.id,
    name: product.title,
    description: product.description,
    type: product.type === 'hosting' ? 'hosting' : 'other',
    pay_type: ownEntry(PAY_TYPES, product.pricing.type ?? '') ?? 'recurring',
    prices: productPrices(product, currency),
    // FOSSBilling has no priced configurable options in its core products.
    config_options: [],
  };
}

/** A period with no v1 cycle (`1W`, `4Y`, `5Y`; at HEAD any code Period.php reads) is `other`. */
function billingCycle(order: RawOrder): ServiceBillingCycle {
  if (order.period === null || order.period === '') return Number(order.price ?? 0) === 0 ? 'free' : 'onetime';
  return CYCLE_OF_PERIOD.get(order.period) ?? 'other';
}

/** FOSSBilling's own total (a float: price × quantity in PHP), or that product computed exactly. */
function orderTotal(order: RawOrder): string {
  return money(order.total ?? multiplyDecimals(order.price ?? '0', order.quantity ?? '1'));
}

const PAYMENT_STATUS: Record<Invoice['status'], NonNullable<Order['payment_status']>> = {
  draft: 'unpaid',
  unpaid: 'unpaid',
  payment_pending: 'unpaid',
  collections: 'unpaid',
  paid: 'paid',
  refunded: 'refunded',
  cancelled: 'cancelled',
  other: 'other',
};

/**
 * `found`: the order's invoice as its search showed it (invoiceOfOrder). Without it, a linked
 * invoice is shown unpaid, as the link says, and an order with no link shows none.
 */
export function mapOrder(order: RawOrder, fallbackCurrency: string, timeZone: string, found: OrderInvoice | null = null): Order {
  const created = utcOf(order.created_at, timeZone);
  if (created === null) throw unreadable(`order ${order.id} has no creation time`);
  const unpaid = unpaidInvoiceOf(order);
  return {
    id: order.id,
    status: ownEntry(ORDER_STATUS, statusOf(order)) ?? 'other',
    created_at: created,
    total: { amount: orderTotal(order), currency: currencyOf(order.currency, fallbackCurrency) },
    invoice_id: unpaid ?? found?.invoice.id ?? null,
    payment_status: found ? (found.refunded ? 'refunded' : PAYMENT_STATUS[invoiceStatus(found.invoice)]) : unpaid !== null ? 'unpaid' : null,
    service_ids: [order.id],
  };
}

/**
 * order/cancel with cancel_at_period_end (0.8.5+) keeps the order running with this meta until its
 * gateway subscription ends (Order/Service.php scheduleCancellationFromOrder): due at its expiry.
 */
export function isCancellationScheduled(order: RawOrder): boolean {
  return order.status !== 'canceled' && !Array.isArray(order.meta) && order.meta?.cancel_at_period_end === '1';
}

export function mapService(order: RawOrder, fallbackCurrency: string): Service {
  const status = ownEntry(SERVICE_STATUS, statusOf(order));
  if (status === undefined) throw unreadable(`order ${order.id} has status "${order.status}", which the mapping does not know`);
  if (!order.product_id || order.product_id === '0') throw unreadable(`order ${order.id} has no product`);
  const scheduled = isCancellationScheduled(order);
  return {
    id: order.id,
    product_id: order.product_id,
    product_name: order.title,
    order_id: order.id,
    status,
    hostname: hostnameOf(order),
    ip_addresses: [],
    billing_cycle: billingCycle(order),
    recurring_amount: { amount: orderTotal(order), currency: currencyOf(order.currency, fallbackCurrency) },
    registered_on: dateOf(order.activated_at) ?? dateOf(order.created_at),
    next_due_on: dateOf(order.expires_at),
    // Only while pending (contract §6), as on WHMCS: a canceled order's cancellation is done.
    cancellation_requested: scheduled,
    cancellation_effective_on: scheduled ? dateOf(order.expires_at) : null,
    config_options: [],
  };
}

export function mapCredentials(order: RawOrder, hosting: { ip: string | null; domain: string | null; username: string | null; server?: { ip?: string | null } | null } | null): Credentials {
  const ip = hosting?.ip || hosting?.server?.ip || null;
  return {
    service_id: order.id,
    username: hosting?.username || null,
    // FOSSBilling never returns a hosting account's password through its API.
    password: null,
    hostname: hosting?.domain || hostnameOf(order),
    ip_addresses: ip ? [ip] : [],
  };
}

function invoiceStatus(invoice: RawInvoice): Invoice['status'] {
  const approved = invoice.approved === undefined || invoice.approved === true || invoice.approved === 1 || invoice.approved === '1';
  if (!approved) return 'draft';
  switch (invoice.status) {
    case 'paid':
      return 'paid';
    case 'unpaid':
      return 'unpaid';
    case 'refunded':
      return 'refunded';
    case 'canceled':
      return 'cancelled';
    default:
      return 'other';
  }
}

export function mapInvoice(invoice: RawInvoice, fallbackCurrency: string, timeZone: string): Invoice {
  const currency = currencyOf(invoice.currency, fallbackCurrency);
  const amount = (value: string | null | undefined) => ({ amount: money(value), currency });
  return {
    id: invoice.id,
    number: invoice.serie_nr ?? String(invoice.nr ?? invoice.id),
    status: invoiceStatus(invoice),
    issued_on: dateOf(invoice.created_at),
    due_on: dateOf(invoice.due_at),
    paid_at: utcOf(invoice.paid_at, timeZone),
    subtotal: amount(invoice.subtotal),
    tax: amount(invoice.tax),
    credit: amount(invoice.credit),
    total: amount(invoice.total),
  };
}

export function mapInvoiceDocument(invoice: RawInvoice, client: RawClient, fallbackCurrency: string, timeZone: string): InvoiceDocument {
  const base = mapInvoice(invoice, fallbackCurrency, timeZone);
  const currency = base.total.currency;
  const due = base.status === 'unpaid' || base.status === 'draft' ? base.total.amount : '0.00';
  const buyer = invoice.buyer ?? {};
  const name = [buyer.first_name, buyer.last_name].filter((part) => part).join(' ') || mapAccount(client, fallbackCurrency).name;
  return {
    ...base,
    // FOSSBilling takes no partial payments: a paid invoice was paid in full. What is kept, as WHMCS
    // reports it (its balance counts refunds): nothing of a refunded one, whose status an admin sets
    // once the money went back (its own refunds leave the original paid and issue a credit note).
    amount_paid: { amount: base.status === 'paid' ? base.total.amount : '0.00', currency },
    balance: { amount: due, currency },
    paid_on: base.paid_at === null ? null : dateOf(invoice.paid_at),
    taxes: [{ rate: invoice.taxrate === null || invoice.taxrate === undefined ? null : taxRate(invoice.taxrate), amount: base.tax }],
    items: invoice.lines.map((line) => ({ description: line.title, amount: { amount: money(line.total), currency }, taxed: line.taxed })),
    customer: {
      name,
      company: buyer.company || client.company || null,
      email: buyer.email || client.email,
      address: addressLines([buyer.address, [buyer.zip, buyer.city].join(' '), buyer.state, buyer.country]),
      tax_id: buyer.company_vat?.trim() || null,
    },
  };
}
