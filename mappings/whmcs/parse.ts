/**
 * Schemas for the raw WHMCS answers (shapes and quirks from the WHMCS facts, §1, §2 and §6). Each
 * reads only the fields the mapping uses; every other field may be absent or odd without effect.
 * They are tolerant where WHMCS is inconsistent (numbers as strings, empty collections as "", [],
 * null or absent, "0000-00-00" for no date, HTML entities); null stands for WHMCS's own "none"
 * ("", 0, "0000-00-00") where a field has one. A used field that is missing fails the answer
 * (502, the operator log names the action and the field), except for these defaults, safe
 * because none of them can make the gateway show or charge an amount the upstream did not state:
 * - invoice `tax` / `tax2` absent: 0.00. Servers without a second tax level omit tax2; `total` is
 *   always the upstream's own, so only the split of the tax figure can be affected.
 * - invoice `taxrate` / `taxrate2` absent: no rate (the PDF says "Tax" without a percentage).
 * - product pricing: a currency, a cycle's price or its setup fee absent: that cycle (currency) is
 *   not offered. The gateway quotes and sells only prices it read; it never assumes a zero fee.
 * - product `customfields` absent, or a custom field without a name: no order-key field, so orders
 *   for the product are refused rather than placed without a way to reconcile them.
 * - client `credit`, product `module`, service `username` / `password`: read only by the requests
 *   that use them (balance, service actions, credentials), which fail when they are absent.
 * - a collection absent while `totalresults` says the page has rows fails; reading it as empty
 *   would be wrong data (an empty list, or "no such order" during reconciliation).
 * The field types are in parse-fields.ts, the invoice answers in parse-invoices.ts.
 */
import { z } from 'zod';
import { oneStepObject, requiredReader, UNREAD, withReader } from '../../src/backend/one-step-field.js';
import type { BillingCycle, ServiceStatus } from '../../src/v1/schemas.js';
import {
  AnyString,
  collection,
  Count,
  Decimal,
  describeIssues,
  Flag,
  Id,
  Lazy,
  LocalTime,
  mapped,
  OptionalId,
  presentCollection,
  RawText,
  rowsDue,
  StartNumber,
  Text,
  TextOrEmpty,
  TextOrNone,
} from './parse-fields.js';
import type { LocalDateTime } from './time.js';

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
const CLIENT_STATUS = { active: 'active', inactive: 'inactive', closed: 'closed' } as const;
const PRODUCT_TYPE = { hostingaccount: 'hosting', reselleraccount: 'reseller', server: 'server', other: 'other' } as const;
const CONFIG_OPTION_TYPE = { '1': 'dropdown', '2': 'radio', '3': 'yesno', '4': 'quantity' } as const;

// ---- GetClientsDetails ----------------------------------------------------------------------

const ClientFields = z.object({
  // Checked against the clientid asked for (backend-calls.ts clientDetails).
  id: Id,
  firstname: TextOrNone,
  lastname: TextOrNone,
  companyname: TextOrNone,
  email: Text,
  // Only the invoice PDF reads these; `tax_id` came with WHMCS 7.7's VAT support.
  address1: TextOrEmpty,
  address2: TextOrEmpty,
  city: TextOrEmpty,
  state: TextOrEmpty,
  postcode: TextOrEmpty,
  countryname: TextOrEmpty,
  tax_id: TextOrEmpty,
  status: mapped(CLIENT_STATUS),
  currency_code: z.string().regex(/^[A-Z]{3}$/, 'not an ISO 4217 code'),
  // Only the balance reads it.
  credit: Lazy(z.union([Decimal, z.null()])),
});
type ClientFieldsOutput = z.output<typeof ClientFields>;

/** The client appears twice (top level, deprecated, and under `client`): `client` when present. */
export const ClientDetailsAnswer = z.unknown().transform((answer, ctx): ClientFieldsOutput => {
  const nested = typeof answer === 'object' && answer !== null && 'client' in answer;
  const result = ClientFields.safeParse(nested ? answer.client : answer);
  if (result.success) return result.data;
  if (nested) {
    for (const issue of result.error.issues) ctx.issues.push({ ...issue, path: ['client', ...issue.path], input: undefined });
  } else {
    const why = describeIssues(result.error.issues);
    ctx.issues.push({ code: 'custom', message: `no \`client\`, and the top-level copy does not fit (${why})`, input: undefined });
  }
  return z.NEVER;
});
export type RawClient = ClientFieldsOutput;

// ---- GetProducts ----------------------------------------------------------------------------

/** `pricing.{CUR}`: prices and setup fees per cycle; "-1.00", or an absent price or fee = not offered. */
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

/** Currency code → pricing; PHP writes an empty map as []. Absent: offered in no currency. */
const PricingByCurrency = z
  .union([z.record(z.string(), CyclePricing), z.array(z.never()).max(0)])
  .optional()
  .transform((value): Record<string, RawCyclePricing> => (value === undefined || Array.isArray(value) ? {} : value));

const ConfigOptionChoice = z.object({ id: Id, name: Text, pricing: PricingByCurrency });

/**
 * A quantity bound; only quantity options read it. WHMCS 8.12's getproducts.php lists them, 8.7's
 * lists an option as id, name, type and options only: absent, the bounds are unknown (orders.ts
 * refuses a quantity it cannot check), and the rest of the catalog is read as usual.
 */
const QuantityBound = z.union([Count, z.null()]).optional();

const ProductConfigOption = z.object({
  id: Id,
  name: Text,
  type: z.union([z.string(), z.number()]).transform(String).pipe(mapped(CONFIG_OPTION_TYPE)),
  minqty: QuantityBound,
  maxqty: QuantityBound,
  options: presentCollection('option', ConfigOptionChoice),
});
export type RawProductConfigOption = z.output<typeof ProductConfigOption>;

/**
 * Read to find the order-key field (one without a name is simply not that field) and the required
 * ones: getCustomFields writes `required` as "*" (stored "on") or "". Anything else reads as not
 * required, as before this was read.
 */
const ProductCustomField = z.object({
  id: Id,
  name: TextOrEmpty,
  required: z.unknown().transform((value) => value === '*' || value === 'on'),
});

/** `stocklevel`, listed only with `stockcontrol`: a whole number, below zero once oversold. */
const StockLevel = z.union([z.number().int(), z.string().trim().regex(/^-?\d{1,15}$/).transform(Number)]).optional();

const Product = z.object({
  pid: Id,
  name: Text,
  description: TextOrNone,
  type: mapped(PRODUCT_TYPE, 'other'),
  // Only service actions read it.
  module: Lazy(RawText),
  paytype: mapped({ free: 'free', onetime: 'onetime', recurring: 'recurring' } as const),
  pricing: PricingByCurrency,
  // Listed only when stock control is on; orders.ts refuses a product with none left.
  stockcontrol: Flag.optional(),
  stocklevel: StockLevel,
  // Absent: no order-key field, so the product cannot be ordered (see placeOrder).
  customfields: collection('customfield', ProductCustomField),
  configoptions: presentCollection('configoption', ProductConfigOption),
});
export type RawProduct = z.output<typeof Product>;

/** GetProducts (not paginated): `products` is absent when nothing matches. Hidden and retired products are included. */
export const ProductsAnswer = z
  .object({ totalresults: Count.optional(), products: collection('product', Product) })
  .superRefine(rowsDue('products'))
  .transform((answer) => answer.products);

// ---- AddOrder / GetOrders -------------------------------------------------------------------

const IdList = z
  .union([z.string(), z.number(), z.null()])
  .optional()
  .transform((value) => (value === null || value === undefined ? '' : String(value)))
  .pipe(z.string().regex(/^(\s*\d+\s*(,\s*\d+\s*)*)?$/, 'not a list of ids'))
  .transform((value) => value.split(',').map((part) => part.trim()).filter((part) => part !== '' && part !== '0'));

/** `serviceids` is a comma-separated string; `invoiceid` is absent with noinvoice. */
export const AddOrderAnswer = z.object({ orderid: Id, serviceids: IdList, invoiceid: OptionalId.optional() });

/** The parts of a GetOrders line item that reconciliation reads. */
export const ORDER_LINE_ITEM = { type: AnyString, relid: OptionalId };
export const OrderLineItem = oneStepObject(ORDER_LINE_ITEM);

const readLocalTime = requiredReader(LocalTime);
const PaymentStatus = mapped(PAYMENT_STATUS, 'other');
const readPaymentStatus = requiredReader(PaymentStatus);

/** A GetOrders row's fields. */
export const ORDER_ROW = {
  id: Id,
  userid: Id,
  date: withReader(LocalTime.pipe(z.custom<LocalDateTime>((value) => value !== null, 'order without a date')), (value) => {
    const date = readLocalTime(value);
    return date === null ? UNREAD : date;
  }),
  amount: Decimal,
  invoiceid: OptionalId,
  // Admins can add custom order statuses; they become `other`.
  status: mapped(ORDER_STATUS, 'other'),
  paymentstatus: withReader(
    z
      .union([z.string(), z.null()])
      .transform((value) => (value ? value : null))
      .pipe(PaymentStatus.nullable()),
    (value) => (value === null || value === '' ? null : readPaymentStatus(value)),
  ),
  lineitems: presentCollection('lineitem', OrderLineItem),
};

/** A GetOrders row, read in one step when every field is in its usual form (src/backend/one-step-field.ts). */
export const Order = oneStepObject(ORDER_ROW);
export type RawOrder = z.output<typeof Order>;

/** GetOrders: `orders` is absent when there are no rows; `totalresults` is only read to check that. */
export const OrdersAnswer = z
  .object({ totalresults: Count.optional(), startnumber: StartNumber, orders: collection('order', Order) })
  .superRefine(rowsDue('orders'));

// ---- GetClientsProducts ---------------------------------------------------------------------

/** Read by order reconciliation only; absent parts read as "" (never as a match). */
const ServiceCustomField = oneStepObject({ id: Id, name: TextOrEmpty, value: TextOrEmpty });
const ServiceConfigOption = oneStepObject({ option: TextOrNone, value: TextOrNone });

/** A GetClientsProducts row's fields. */
export const SERVICE_ROW = {
  id: Id,
  clientid: Id,
  orderid: OptionalId,
  pid: Id,
  regdate: LocalTime,
  name: Text,
  domain: TextOrNone,
  // dedicatedip/assignedips are the service's own addresses; serverip/serverhostname are the node's.
  dedicatedip: RawText,
  assignedips: RawText,
  billingcycle: mapped(SERVICE_BILLING_CYCLE),
  nextduedate: LocalTime,
  status: mapped(SERVICE_STATUS),
  // Only the credentials read them.
  username: Lazy(RawText),
  password: Lazy(RawText),
  recurringamount: Decimal,
  customfields: collection('customfield', ServiceCustomField),
  configoptions: presentCollection('configoption', ServiceConfigOption),
};

/** A GetClientsProducts row, read in one step when every field is in its usual form (src/backend/one-step-field.ts). */
export const Service = oneStepObject(SERVICE_ROW);
export type RawService = z.output<typeof Service>;

/** GetClientsProducts: `products` is "" when there are none. */
export const ServicesAnswer = z
  .object({ totalresults: Count, startnumber: StartNumber, products: collection('product', Service) })
  .superRefine(rowsDue('products'));

// ---- GetCancelledPackages -------------------------------------------------------------------

/** `type` decides the effective date ("Immediate" or "End of Billing Period"): no default. */
const CancellationRequest = z.object({ relid: Id, type: Text });
export type RawCancellationRequest = z.output<typeof CancellationRequest>;

/** `packages` is [] when there are none. */
export const CancellationsAnswer = z
  .object({ totalresults: Count, startnumber: StartNumber, packages: collection('package', CancellationRequest) })
  .superRefine(rowsDue('packages'));
