/**
 * The shapes of the FOSSBilling answers the mapping reads, as its source produces them: ids and
 * amounts come as numbers from `toApiArray()` but as strings from SQL-backed lists (`get_list` rows
 * are raw `fetchAllAssociative` rows), DECIMAL columns as strings, computed totals as floats.
 * Only the fields used are declared; everything else is ignored.
 */
import { z } from 'zod';
import { decimalOfNumber } from '../../src/backend/decimal.js';
import { oneStep, UNREAD } from '../../src/backend/one-step-field.js';

const ID = /^\d{1,18}$/;
/** Leading zeros dropped ("007" is 7): v1 ids have none, and ids are compared as text. */
const canonicalId = (digits: string): string => digits.replace(/^0+(?=\d)/, '');
const AMOUNT = /^-?\d+(\.\d+)?$/;

/**
 * The unions as plain zod: the reference for their one-step forms below (src/backend/one-step-field.ts),
 * which read the usual forms without zod's per-branch work; a test holds the two alike.
 */
export const plain = {
  /** A number or a numeric string, as a string of digits. */
  Id: z.union([z.number().int().nonnegative(), z.string().regex(ID)]).transform((value) => canonicalId(String(value))),
  /**
   * A number or a decimal string (FOSSBilling mixes both), as a decimal string: a float's shortest
   * text, noise and all, without an exponent (map.ts rounds money to its currency's decimals).
   */
  Amount: z.union([z.number(), z.string().regex(AMOUNT)]).transform((value) => (typeof value === 'number' ? decimalOfNumber(value) : value)),
  /** Text, or null for none (absent too). */
  OptionalText: z.string().nullish().transform((value) => value ?? null),
  /** "YYYY-MM-DD HH:MM:SS" or null; the placeholder 0000-00-00 counts as null. */
  DateTime: z
    .string()
    .nullish()
    .transform((value) => (value && !value.startsWith('0000-00-00') ? value : null)),
  /** PHP truthiness as FOSSBilling's flags come: true, 1 or "1". */
  Flag: z.union([z.boolean(), z.number(), z.string()]).transform((value) => value === true || value === 1 || value === '1'),
};

export const Id = oneStep(plain.Id, (value) => {
  if (typeof value === 'string') return ID.test(value) ? canonicalId(value) : UNREAD;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? String(value) : UNREAD;
});

/** A record's own id, which v1 shows: 0 (a reference's "none") is no record's. */
const RecordId = Id.refine((id) => id !== '0', 'not a record id');

export const Amount = oneStep(plain.Amount, (value) => {
  if (typeof value === 'string') return AMOUNT.test(value) ? value : UNREAD;
  return typeof value === 'number' && Number.isFinite(value) ? decimalOfNumber(value) : UNREAD;
});

export const OptionalText = oneStep(plain.OptionalText, (value) => {
  if (typeof value === 'string') return value;
  return value === null || value === undefined ? null : UNREAD;
});

export const DateTime = oneStep(plain.DateTime, (value) => {
  if (typeof value === 'string') return value && !value.startsWith('0000-00-00') ? value : null;
  return value === null || value === undefined ? null : UNREAD;
});

export const Flag = oneStep(plain.Flag, (value) => {
  const readable = typeof value === 'boolean' || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
  return readable ? value === true || value === 1 || value === '1' : UNREAD;
});


export const PaginatedShape = <T extends z.ZodType>(item: T) =>
  z.object({ list: z.array(item), total: z.union([z.number(), z.string().regex(/^\d+$/)]).transform(Number) });

const Period = z.object({
  price: Amount.nullish(),
  setup: Amount.nullish(),
  enabled: Flag,
});

export const ProductAnswer = z.object({
  id: RecordId,
  type: z.string(),
  title: z.string().nullish().transform((value) => value ?? ''),
  description: z.string().nullish().transform((value) => value ?? ''),
  status: z.string().optional(),
  hidden: Flag.optional().transform((value) => value === true),
  /** When an order is set up: `after_payment` (FOSSBilling's default), `after_order` or `manual` (admin toApiArray). */
  setup: z.string().nullish(),
  // Domain products carry a list of TLD prices instead (getDomainPricingArray): never offered through v1.
  pricing: z.union([
    z
      .object({
        type: z.string().optional(),
        free: z.object({ price: Amount.nullish(), setup: Amount.nullish() }).optional(),
        once: z.object({ price: Amount.nullish(), setup: Amount.nullish() }).optional(),
        // An empty PHP array encodes as [] rather than {}.
        recurrent: z.union([z.record(z.string(), Period), z.array(z.never())]).optional(),
      })
      .passthrough(),
    z.array(z.unknown()).transform(() => ({ type: 'domain' as string | undefined, free: undefined, once: undefined, recurrent: undefined })),
  ]),
});
export type RawProduct = z.infer<typeof ProductAnswer>;
export const ProductListAnswer = PaginatedShape(ProductAnswer);

export const ClientAnswer = z.object({
  id: Id,
  email: z.string().nullish().transform((value) => value ?? ''),
  first_name: OptionalText,
  last_name: OptionalText,
  company: OptionalText,
  currency: OptionalText,
  status: z.string().optional(),
  /**
   * The sum of the client's balance rows. 0.6.x and 0.7.x take it with RedBean's getCell over a
   * GROUP BY (Client/Service.php getClientBalance): null when the client has none.
   */
  balance: Amount.nullish(),
});
export type RawClient = z.infer<typeof ClientAnswer>;

export const OrderAnswer = z.object({
  id: RecordId,
  client_id: Id,
  product_id: Id.nullish(),
  title: z.string().nullish().transform((value) => value ?? ''),
  currency: OptionalText,
  unpaid_invoice_id: Id.nullish(),
  period: OptionalText,
  quantity: Amount.nullish(),
  price: Amount.nullish(),
  total: Amount.nullish(),
  status: z.string().nullish().transform((value) => value ?? ''),
  config: z.unknown().optional(),
  meta: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional(),
  expires_at: DateTime,
  activated_at: DateTime,
  canceled_at: DateTime,
  created_at: DateTime,
});
export type RawOrder = z.infer<typeof OrderAnswer>;
export const OrderListAnswer = PaginatedShape(OrderAnswer);

/** `order/service` for a hosting order; null when the order has no service yet. */
export const HostingServiceAnswer = z
  .object({
    ip: OptionalText,
    domain: OptionalText,
    username: OptionalText,
    server: z.object({ ip: OptionalText, hostname: OptionalText }).partial().nullish(),
  })
  .passthrough()
  .nullable();

const InvoiceLine = z.object({
  title: z.string().nullish().transform((value) => value ?? ''),
  /** The order a line of type `order` is for (its rel_id), else null (Invoice/Service.php toApiArray). */
  order_id: Id.nullish(),
  total: Amount.nullish(),
  taxed: Flag.optional().transform((value) => value === true),
});

export const InvoiceAnswer = z.object({
  id: RecordId,
  client_id: Id.nullish(),
  serie_nr: z.string().nullish(),
  nr: z.union([z.string(), z.number()]).nullish(),
  currency: OptionalText,
  status: z.string().nullish().transform((value) => value ?? ''),
  approved: z.union([z.boolean(), z.number(), z.string()]).optional(),
  subtotal: Amount.nullish(),
  tax: Amount.nullish(),
  total: Amount.nullish(),
  credit: Amount.nullish(),
  taxrate: Amount.nullish(),
  due_at: DateTime,
  paid_at: DateTime,
  created_at: DateTime,
  lines: z.array(InvoiceLine).optional().default([]),
  buyer: z
    .object({
      first_name: OptionalText,
      last_name: OptionalText,
      company: OptionalText,
      email: OptionalText,
      // Copied from the client when the invoice was made (Invoice/Service.php); the PDF reads them.
      address: OptionalText,
      city: OptionalText,
      state: OptionalText,
      zip: OptionalText,
      country: OptionalText,
      company_vat: OptionalText,
    })
    .partial()
    .nullish(),
});
export type RawInvoice = z.infer<typeof InvoiceAnswer>;
export const InvoiceListAnswer = PaginatedShape(InvoiceAnswer);

/** The order actions answer `true` (src/modules/Order/Api/Admin.php, `@return bool`). */
export const ActionAnswer = z.literal(true);

/** `order/create` answers the new order's id. */
export const CreatedOrderAnswer = RecordId;

export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
}
