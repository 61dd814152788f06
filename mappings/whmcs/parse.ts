/**
 * Schemas for the raw WHMCS answers (shapes and quirks from the WHMCS facts, §1, §2 and §6). They
 * are tolerant where WHMCS is inconsistent (numbers as strings, empty collections as "" or [] or
 * absent, "0000-00-00" for no date, HTML entities) and strict everywhere else: an answer that does
 * not fit is an upstream error, never a crash. Upstream enums become v1 enums here.
 */
import { z } from 'zod';
import type { BillingCycle, ServiceStatus } from '../../src/v1/schemas.js';
import { decodeEntities } from './text.js';
import { type LocalDateTime, parseLocalDateTime } from './time.js';

// ---- primitives -----------------------------------------------------------------------------

/** Legacy WHMCS code returns numbers as strings, Eloquent code as numbers: accept both. */
const Int = z
  .union([z.number(), z.string().regex(/^\s*-?\d{1,16}\s*$/).transform(Number)])
  .pipe(z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER));

const Count = Int.pipe(z.number().min(0));

/** A record id: positive; v1 ids are strings. */
const Id = Int.pipe(z.number().min(1)).transform(String);

/** A reference that WHMCS writes as 0, "0", "" or null when there is none. */
const OptionalId = z
  .union([z.null(), z.literal(''), Int.pipe(z.number().min(0))])
  .optional()
  .transform((value) => (typeof value === 'number' && value > 0 ? String(value) : null));

function padDecimals(decimal: string): string {
  const [whole, fraction = ''] = decimal.split('.');
  return `${whole}.${fraction.padEnd(2, '0')}`;
}

/** Money is a decimal string ("9.99", "-1.00"), sometimes a JSON number; never a float on our side. */
const Decimal = z
  .union([z.number().transform(String), z.string().trim()])
  .pipe(z.string().regex(/^-?\d{1,15}(\.\d{1,8})?$/, 'not a decimal amount'))
  .transform(padDecimals);

/** Free text: decoded once, since WHMCS stores every input HTML-encoded. */
const Text = z.union([z.string(), z.number()]).transform((value) => decodeEntities(String(value)));
const OptionalText = z
  .union([Text, z.null()])
  .optional()
  .transform((value) => value ?? '');

/** Kept byte for byte (credentials, addresses): decoding could corrupt a secret. */
const RawText = z
  .union([z.string(), z.number(), z.null()])
  .optional()
  .transform((value) => (value === null || value === undefined ? '' : String(value)));

/** "YYYY-MM-DD" or "YYYY-MM-DD HH:MM:SS"; "0000-00-00…", "" and null mean none. */
const LocalTime = z
  .union([z.string(), z.null()])
  .optional()
  .transform((value, ctx): LocalDateTime | null => {
    if (value === null || value === undefined || value === '' || value.startsWith('0000-00-00')) return null;
    const parsed = parseLocalDateTime(value.trim());
    if (!parsed) ctx.issues.push({ code: 'custom', message: 'not a date', input: value });
    return parsed;
  });

/** PHP truthiness as WHMCS writes flags: 1/0, "1"/"0", "on"/"", true/false. */
const Flag = z
  .union([z.boolean(), z.number(), z.string(), z.null()])
  .optional()
  .transform((value) => value === true || value === 1 || value === '1' || value === 'on' || value === 'true');

/**
 * A WHMCS collection `{ <item>: [...] }`. When empty, WHMCS sends "" (GetClientsProducts), [] (GetInvoices),
 * null, or omits the key (GetProducts, GetOrders, GetInvoice items).
 */
function collection<K extends string, T extends z.ZodType>(key: K, item: T) {
  const wrapper = z.object({ [key]: z.array(item) } as { [P in K]: z.ZodArray<T> });
  return z
    .union([wrapper, z.literal(''), z.null(), z.array(z.never()).max(0)])
    .optional()
    .transform((value): Array<z.output<T>> => {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
      return (value as Record<K, Array<z.output<T>>>)[key];
    });
}

/** Upstream enum → v1 enum through a table, compared case- and punctuation-insensitively. */
function mapped<T>(table: Readonly<Record<string, T>>, fallback?: T) {
  return z.string().transform((value, ctx): T => {
    const found = table[value.toLowerCase().replace(/[^a-z0-9]/g, '')];
    if (found !== undefined) return found;
    if (fallback !== undefined) return fallback;
    ctx.issues.push({ code: 'custom', message: 'unknown value', input: value });
    return z.NEVER;
  });
}

/**
 * Where and why an answer did not fit, for the operator. A union's first branch is the real shape
 * (the others are WHMCS's ways of saying "empty"), so its issues are the ones that explain. Values
 * are never quoted: an answer may hold a password.
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], limit = 5): string {
  const flat = (list: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[]): string[] =>
    list.flatMap((issue) => {
      const path = [...prefix, ...issue.path];
      const firstBranch = issue.code === 'invalid_union' ? issue.errors[0] : undefined;
      if (firstBranch && firstBranch.length > 0) return flat(firstBranch, path);
      return [`${path.map(String).join('.') || '(root)'}: ${issue.message}`];
    });
  return flat(issues, []).slice(0, limit).join('; ');
}

// ---- enums ----------------------------------------------------------------------------------

const SERVICE_STATUS: Readonly<Record<string, ServiceStatus>> = {
  pending: 'pending',
  active: 'active',
  // "Completed" marks a delivered one-time or non-recurring service: it exists and is in use, with
  // nothing left to bill. That is `active` in v1; there is no v1 state for "no longer billed".
  completed: 'active',
  suspended: 'suspended',
  terminated: 'terminated',
  cancelled: 'cancelled',
  fraud: 'fraud',
};

const SERVICE_BILLING_CYCLE: Readonly<Record<string, BillingCycle>> = {
  monthly: 'monthly',
  quarterly: 'quarterly',
  semiannually: 'semiannually',
  annually: 'annually',
  biennially: 'biennially',
  triennially: 'triennially',
  onetime: 'onetime',
  freeaccount: 'free',
  free: 'free',
};

const ORDER_STATUS = { pending: 'pending', active: 'active', cancelled: 'cancelled', fraud: 'fraud' } as const;
const PAYMENT_STATUS = { paid: 'paid', unpaid: 'unpaid', cancelled: 'cancelled', refunded: 'refunded' } as const;
const INVOICE_STATUS = {
  draft: 'draft',
  unpaid: 'unpaid',
  paid: 'paid',
  cancelled: 'cancelled',
  refunded: 'refunded',
  collections: 'collections',
  paymentpending: 'payment_pending',
} as const;
const CLIENT_STATUS = { active: 'active', inactive: 'inactive', closed: 'closed' } as const;
const PRODUCT_TYPE = { hostingaccount: 'hosting', reselleraccount: 'reseller', server: 'server', other: 'other' } as const;
const CONFIG_OPTION_TYPE = { '1': 'dropdown', '2': 'radio', '3': 'yesno', '4': 'quantity' } as const;

// ---- GetClientsDetails ----------------------------------------------------------------------

const ClientFields = z.object({
  firstname: OptionalText,
  lastname: OptionalText,
  companyname: OptionalText,
  email: Text,
  status: mapped(CLIENT_STATUS),
  currency_code: z.string().regex(/^[A-Z]{3}$/, 'not an ISO 4217 code'),
  credit: Decimal,
});

/** The client appears twice (top level, deprecated, and under `client`): `client` when present. */
export const ClientDetailsAnswer = z.preprocess(
  (answer) => (typeof answer === 'object' && answer !== null && 'client' in answer ? answer.client : answer),
  ClientFields,
);
export type RawClient = z.output<typeof ClientDetailsAnswer>;

// ---- GetProducts ----------------------------------------------------------------------------

/** `pricing.{CUR}`: prices and setup fees per cycle; "-1.00" or absent = cycle disabled. */
const CyclePricing = z.object({
  msetupfee: Decimal.optional(),
  qsetupfee: Decimal.optional(),
  ssetupfee: Decimal.optional(),
  asetupfee: Decimal.optional(),
  bsetupfee: Decimal.optional(),
  tsetupfee: Decimal.optional(),
  monthly: Decimal.optional(),
  quarterly: Decimal.optional(),
  semiannually: Decimal.optional(),
  annually: Decimal.optional(),
  biennially: Decimal.optional(),
  triennially: Decimal.optional(),
});
export type RawCyclePricing = z.output<typeof CyclePricing>;

/** Currency code → pricing; PHP writes an empty map as []. */
const PricingByCurrency = z
  .union([z.record(z.string(), CyclePricing), z.array(z.never()).max(0)])
  .transform((value): Record<string, RawCyclePricing> => (Array.isArray(value) ? {} : value));

const ConfigOptionChoice = z.object({ id: Id, name: Text, pricing: PricingByCurrency.optional().transform((value) => value ?? {}) });

const ProductConfigOption = z.object({
  id: Id,
  name: Text,
  type: z.union([z.string(), z.number()]).transform(String).pipe(mapped(CONFIG_OPTION_TYPE)),
  minqty: Count.optional(),
  maxqty: Count.optional(),
  options: collection('option', ConfigOptionChoice),
});
export type RawProductConfigOption = z.output<typeof ProductConfigOption>;

const ProductCustomField = z.object({ id: Id, name: Text });

const Product = z.object({
  pid: Id,
  name: Text,
  description: OptionalText,
  type: mapped(PRODUCT_TYPE, 'other'),
  module: RawText,
  paytype: mapped({ free: 'free', onetime: 'onetime', recurring: 'recurring' } as const),
  pricing: PricingByCurrency.optional().transform((value) => value ?? {}),
  customfields: collection('customfield', ProductCustomField),
  configoptions: collection('configoption', ProductConfigOption),
});
export type RawProduct = z.output<typeof Product>;

/** GetProducts: `products` is absent when nothing matches. Hidden and retired products are included. */
export const ProductsAnswer = z.object({ products: collection('product', Product) }).transform((answer) => answer.products);

// ---- AddOrder / GetOrders -------------------------------------------------------------------

const IdList = z
  .union([z.string(), z.number(), z.null()])
  .optional()
  .transform((value) => (value === null || value === undefined ? '' : String(value)))
  .pipe(z.string().regex(/^(\s*\d+\s*(,\s*\d+\s*)*)?$/, 'not a list of ids'))
  .transform((value) => value.split(',').map((part) => part.trim()).filter((part) => part !== '' && part !== '0'));

/** `serviceids` is a comma-separated string; `invoiceid` is absent with noinvoice. */
export const AddOrderAnswer = z.object({ orderid: Id, serviceids: IdList, invoiceid: OptionalId });

const OrderLineItem = z.object({ type: z.string(), relid: OptionalId });

const Order = z.object({
  id: Id,
  userid: Id,
  date: LocalTime.pipe(z.custom<LocalDateTime>((value) => value !== null, 'order without a date')),
  amount: Decimal,
  invoiceid: OptionalId,
  // Admins can add custom order statuses; they become `other`.
  status: mapped(ORDER_STATUS, 'other'),
  paymentstatus: z
    .union([z.string(), z.null()])
    .optional()
    .transform((value) => (value ? value : null))
    .pipe(mapped(PAYMENT_STATUS, 'other').nullable()),
  lineitems: collection('lineitem', OrderLineItem),
});
export type RawOrder = z.output<typeof Order>;

/** GetOrders: `orders` is absent when there are no rows. */
export const OrdersAnswer = z.object({ totalresults: Count, orders: collection('order', Order) });

// ---- GetClientsProducts ---------------------------------------------------------------------

const ServiceCustomField = z.object({ id: Id, name: OptionalText, value: OptionalText });
const ServiceConfigOption = z.object({ option: OptionalText, value: OptionalText });

const Service = z.object({
  id: Id,
  clientid: Id,
  orderid: OptionalId,
  pid: Id,
  regdate: LocalTime,
  name: Text,
  domain: OptionalText,
  // dedicatedip/assignedips are the service's own addresses; serverip/serverhostname are the node's.
  dedicatedip: RawText,
  assignedips: RawText,
  billingcycle: mapped(SERVICE_BILLING_CYCLE),
  nextduedate: LocalTime,
  status: mapped(SERVICE_STATUS),
  username: RawText,
  password: RawText,
  recurringamount: Decimal,
  customfields: collection('customfield', ServiceCustomField),
  configoptions: collection('configoption', ServiceConfigOption),
});
export type RawService = z.output<typeof Service>;

/** GetClientsProducts: `products` is "" when there are none. */
export const ServicesAnswer = z.object({ totalresults: Count, products: collection('product', Service) });

// ---- GetCancelledPackages -------------------------------------------------------------------

const CancellationRequest = z.object({ relid: Id, type: OptionalText });
export type RawCancellationRequest = z.output<typeof CancellationRequest>;

/** `packages` is [] when there are none. */
export const CancellationsAnswer = z.object({ totalresults: Count, packages: collection('package', CancellationRequest) });

// ---- GetInvoices / GetInvoice ---------------------------------------------------------------

const InvoiceStatus = mapped(INVOICE_STATUS, 'other');

/** The dates and amounts GetInvoices rows and GetInvoice share. */
const INVOICE_FIGURES = {
  date: LocalTime,
  duedate: LocalTime,
  datepaid: LocalTime,
  subtotal: Decimal,
  credit: Decimal,
  tax: Decimal,
  tax2: Decimal,
  total: Decimal,
};

const Invoice = z.object({
  id: Id,
  userid: Id,
  invoicenum: OptionalText,
  ...INVOICE_FIGURES,
  status: InvoiceStatus,
  // Only in newer versions; otherwise the invoice is in the client's currency.
  currencycode: z.string().regex(/^[A-Z]{3}$/).optional().catch(undefined),
});
export type RawInvoice = z.output<typeof Invoice>;

/** GetInvoices: `invoices` is [] when there are none. */
export const InvoicesAnswer = z.object({ totalresults: Count, invoices: collection('invoice', Invoice) });

const InvoiceItem = z.object({ description: OptionalText, amount: Decimal, taxed: Flag });

/** GetInvoice: `items` is absent without items, `transactions` is "" (not read). */
export const InvoiceAnswer = z.object({
  invoiceid: Id,
  invoicenum: OptionalText,
  userid: Id,
  ...INVOICE_FIGURES,
  balance: Decimal,
  taxrate: Decimal,
  status: InvoiceStatus,
  items: collection('item', InvoiceItem),
});
export type RawInvoiceDocument = z.output<typeof InvoiceAnswer>;
