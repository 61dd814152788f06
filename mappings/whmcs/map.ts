/**
 * Parsed WHMCS records → v1 resources. Only documented v1 fields are built: passwords appear in
 * credentials only; admin notes, node addresses (serverip/serverhostname), subscription and
 * payment method never leave this module.
 */
import { addressLines } from '../../src/backend/address.js';
import { addDecimals } from '../../src/backend/decimal.js';
import { localDate, localToUtc } from '../../src/backend/time-zone.js';
import type {
  Account,
  BillingCycle,
  ConfigOption,
  Credentials,
  Invoice,
  InvoiceDocument,
  Money,
  Order,
  Price,
  Product,
  Service,
} from '../../src/v1/schemas.js';
import type {
  RawCancellationRequest,
  RawClient,
  RawCyclePricing,
  RawOrder,
  RawProduct,
  RawProductConfigOption,
  RawService,
} from './parse.js';
import { isZero, type RawInvoice, type RawInvoiceDocument } from './parse-invoices.js';
import { displayName, htmlToText } from './text.js';

const money = (amount: string, currency: string): Money => ({ amount, currency });
const negated = (decimal: string): string => (decimal.startsWith('-') ? decimal.slice(1) : `-${decimal}`);

// ---- account --------------------------------------------------------------------------------

export function mapAccount(client: RawClient): Omit<Account, 'id'> {
  return {
    name: `${client.firstname} ${client.lastname}`.trim(),
    company: client.companyname === '' ? null : client.companyname,
    email: client.email,
    status: client.status,
    currency: client.currency_code,
  };
}

// ---- products -------------------------------------------------------------------------------

type RecurringCycle = Exclude<BillingCycle, 'onetime' | 'free'>;

/** Price field and setup-fee field of each recurring cycle in `pricing.{CUR}`. */
const RECURRING_FIELDS: ReadonlyArray<readonly [RecurringCycle, keyof RawCyclePricing, keyof RawCyclePricing]> = [
  ['monthly', 'monthly', 'msetupfee'],
  ['quarterly', 'quarterly', 'qsetupfee'],
  ['semiannually', 'semiannually', 'ssetupfee'],
  ['annually', 'annually', 'asetupfee'],
  ['biennially', 'biennially', 'bsetupfee'],
  ['triennially', 'triennially', 'tsetupfee'],
];

const isCurrencyCode = (code: string): boolean => /^[A-Z]{3}$/.test(code);
/** "-1.00" (or a missing field) marks a disabled cycle. */
const isEnabled = (price: string | undefined): price is string => price !== undefined && !price.startsWith('-');
/** A negative setup fee means none; an absent one is unknown, so the cycle is not offered (never a guessed 0.00). */
const setupFee = (fee: string): string => (isEnabled(fee) ? fee : '0.00');

/** Where a cycle's price and setup fee are; one-time prices live in the monthly fields. */
function pricingFields(cycle: BillingCycle): readonly [keyof RawCyclePricing, keyof RawCyclePricing] {
  const recurring = RECURRING_FIELDS.find(([candidate]) => candidate === cycle);
  return recurring ? [recurring[1], recurring[2]] : ['monthly', 'msetupfee'];
}

function priceOf(currency: string, cycle: BillingCycle, pricing: RawCyclePricing): Price[] {
  const [priceField, feeField] = pricingFields(cycle);
  const price = pricing[priceField];
  const fee = pricing[feeField];
  return isEnabled(price) && fee !== undefined ? [{ currency, billing_cycle: cycle, price, setup_fee: setupFee(fee) }] : [];
}

function cyclePrices(paytype: RawProduct['paytype'], currency: string, pricing: RawCyclePricing): Price[] {
  if (paytype === 'free') return [{ currency, billing_cycle: 'free', price: '0.00', setup_fee: '0.00' }];
  if (paytype === 'onetime') return priceOf(currency, 'onetime', pricing);
  return RECURRING_FIELDS.flatMap(([cycle]) => priceOf(currency, cycle, pricing));
}

export function productPrices(product: RawProduct): Price[] {
  return Object.entries(product.pricing)
    .filter(([currency]) => isCurrencyCode(currency))
    .flatMap(([currency, pricing]) => cyclePrices(product.paytype, currency, pricing));
}

/**
 * A choice costs what its pricing says for each cycle the product itself offers, negative amounts
 * included: WHMCS bills a choice's price and setup fee as they are (getCartConfigOptions), so
 * "-1.00 = disabled" is a rule of product pricing only. Absent: not quoted (never a guessed amount).
 */
function choicePrices(productPriceList: Price[], pricing: Record<string, RawCyclePricing>): Price[] {
  return productPriceList.flatMap(({ currency, billing_cycle }): Price[] => {
    if (billing_cycle === 'free') return [{ currency, billing_cycle, price: '0.00', setup_fee: '0.00' }];
    const cyclePricing = pricing[currency];
    if (!cyclePricing) return [];
    const [priceField, feeField] = pricingFields(billing_cycle);
    const price = cyclePricing[priceField];
    const fee = cyclePricing[feeField];
    return price !== undefined && fee !== undefined ? [{ currency, billing_cycle, price, setup_fee: fee }] : [];
  });
}

function mapConfigOption(option: RawProductConfigOption, productPriceList: Price[]): ConfigOption {
  // Both bounds stated, or neither is shown (parse.ts QuantityBound): orders.ts refuses a quantity then.
  const bounded = option.type === 'quantity' && option.minqty != null && option.maxqty != null;
  return {
    id: option.id,
    name: displayName(option.name),
    type: option.type,
    min_quantity: bounded ? (option.minqty as number) : null,
    // WHMCS treats a maximum of 0 as "no maximum".
    max_quantity: bounded && option.maxqty ? option.maxqty : null,
    choices: option.options.map((choice) => ({
      id: choice.id,
      name: displayName(choice.name),
      prices: choicePrices(productPriceList, choice.pricing),
    })),
  };
}

/**
 * WHMCS returns hidden config options and sub-options without a flag, so they are listed like the
 * others; only whole products are hidden, through the configured allow-list.
 */
export function mapProduct(product: RawProduct): Product {
  const prices = productPrices(product);
  return {
    id: product.pid,
    name: product.name,
    description: htmlToText(product.description),
    type: product.type,
    pay_type: product.paytype,
    prices,
    config_options: product.configoptions.map((option) => mapConfigOption(option, prices)),
  };
}

// ---- orders ---------------------------------------------------------------------------------

/** Orders carry no currency code; WHMCS bills every order in its client's currency. */
export function mapOrder(order: RawOrder, currency: string, timeZone: string): Order {
  return {
    id: order.id,
    status: order.status,
    created_at: localToUtc(order.date, timeZone),
    total: money(order.amount, currency),
    invoice_id: order.invoiceid,
    payment_status: order.paymentstatus,
    service_ids: order.lineitems.flatMap((item) => (item.type === 'product' && item.relid !== null ? [item.relid] : [])),
  };
}

// ---- services -------------------------------------------------------------------------------

/** The service's own addresses: primary IP plus assigned IPs (newline or comma separated). */
function serviceAddresses(service: RawService): string[] {
  const all = `${service.dedicatedip}\n${service.assignedips}`.split(/[\s,;]+/).filter((address) => address !== '');
  return [...new Set(all)];
}

/** A cancellation request counts while the service still runs; WHMCS never deletes processed ones. */
function pendingCancellation(service: RawService, request: RawCancellationRequest | undefined): RawCancellationRequest | undefined {
  const running = service.status === 'pending' || service.status === 'active' || service.status === 'suspended';
  return running ? request : undefined;
}

export function mapService(service: RawService, currency: string, cancellation: RawCancellationRequest | undefined): Service {
  const request = pendingCancellation(service, cancellation);
  const nextDue = service.nextduedate ? localDate(service.nextduedate) : null;
  return {
    id: service.id,
    product_id: service.pid,
    product_name: service.name,
    order_id: service.orderid,
    status: service.status,
    hostname: service.domain === '' ? null : service.domain,
    ip_addresses: serviceAddresses(service),
    billing_cycle: service.billingcycle,
    recurring_amount: money(service.recurringamount, currency),
    registered_on: service.regdate ? localDate(service.regdate) : null,
    next_due_on: nextDue,
    cancellation_requested: request !== undefined,
    // "Immediate" requests wait for the next cron run: no date can be promised for them.
    cancellation_effective_on: request && request.type.toLowerCase() !== 'immediate' ? nextDue : null,
    config_options: service.configoptions.map((option) => ({ name: displayName(option.option), value: option.value })),
  };
}

/** `username` and `password` are passed in once checked: the schema leaves them optional (see parse.ts). */
export function mapCredentials(service: RawService, username: string, password: string): Credentials {
  return {
    service_id: service.id,
    username: username === '' ? null : username,
    password: password === '' ? null : password,
    hostname: service.domain === '' ? null : service.domain,
    ip_addresses: serviceAddresses(service),
  };
}

// ---- invoices -------------------------------------------------------------------------------

type InvoiceFields = Pick<
  RawInvoiceDocument,
  'invoicenum' | 'date' | 'duedate' | 'datepaid' | 'subtotal' | 'tax' | 'tax2' | 'credit' | 'total' | 'status'
>;

function invoiceBody(id: string, invoice: InvoiceFields, currency: string, timeZone: string): Invoice {
  return {
    id,
    number: invoice.invoicenum === '' ? id : invoice.invoicenum,
    status: invoice.status,
    issued_on: invoice.date ? localDate(invoice.date) : null,
    due_on: invoice.duedate ? localDate(invoice.duedate) : null,
    paid_at: invoice.datepaid ? localToUtc(invoice.datepaid, timeZone) : null,
    subtotal: money(invoice.subtotal, currency),
    // v1 has one tax figure; WHMCS splits it in two levels.
    tax: money(addDecimals(invoice.tax, invoice.tax2), currency),
    credit: money(invoice.credit, currency),
    total: money(invoice.total, currency),
  };
}

export function mapInvoice(invoice: RawInvoice, clientCurrency: string, timeZone: string): Invoice {
  return invoiceBody(invoice.id, invoice, invoice.currencycode ?? clientCurrency, timeZone);
}

/** Statuses on which nothing is owed, whatever GetInvoice's `balance` says. */
const NOTHING_DUE: ReadonlySet<Invoice['status']> = new Set(['paid', 'cancelled', 'refunded']);

/** The second level is shown only where the install uses one: each level under its own rate. */
function taxLevels(invoice: RawInvoiceDocument, currency: string): InvoiceDocument['taxes'] {
  const first = { rate: invoice.taxrate, amount: money(invoice.tax, currency) };
  const secondUsed = !isZero(invoice.tax2) || (invoice.taxrate2 !== null && !isZero(invoice.taxrate2));
  return secondUsed ? [first, { rate: invoice.taxrate2, amount: money(invoice.tax2, currency) }] : [first];
}

export function mapInvoiceDocument(invoice: RawInvoiceDocument, client: RawClient, timeZone: string): InvoiceDocument {
  const currency = client.currency_code;
  const account = mapAccount(client);
  return {
    ...invoiceBody(invoice.invoiceid, invoice, currency, timeZone),
    // WHMCS's balance is the total minus the payments (GetInvoice `transactions`).
    amount_paid: money(addDecimals(invoice.total, negated(invoice.balance)), currency),
    // ...whatever the status: a cancelled or refunded invoice reports its whole total. Nothing is due on those.
    balance: money(NOTHING_DUE.has(invoice.status) ? '0.00' : invoice.balance, currency),
    paid_on: invoice.datepaid ? localDate(invoice.datepaid) : null,
    taxes: taxLevels(invoice, currency),
    items: invoice.items.map((item) => ({ description: item.description, amount: money(item.amount, currency), taxed: item.taxed })),
    customer: {
      name: account.name,
      company: account.company,
      email: account.email,
      address: addressLines([client.address1, client.address2, [client.postcode, client.city].join(' '), client.state, client.countryname]),
      tax_id: client.tax_id.trim() || null,
    },
  };
}
