/**
 * Schemas for the WHMCS invoice answers, GetInvoices and GetInvoice (tolerance rules and the
 * defaults of `tax`, `tax2` and `taxrate`: see parse.ts).
 */
import { z } from 'zod';
import { oneStepObject, UNREAD, withReader } from '../../src/backend/one-step-field.js';
import { collection, Count, Decimal, Flag, Id, LocalTime, mapped, readDecimal, rowsDue, StartNumber, TextOrNone } from './parse-fields.js';

const INVOICE_STATUS = {
  draft: 'draft',
  unpaid: 'unpaid',
  paid: 'paid',
  cancelled: 'cancelled',
  refunded: 'refunded',
  collections: 'collections',
  paymentpending: 'payment_pending',
} as const;

// ---- GetInvoices / GetInvoice ---------------------------------------------------------------

const InvoiceStatus = mapped(INVOICE_STATUS, 'other');

/** A tax level: absent or null is 0.00 (see the defaults at the top). */
const Tax = withReader(
  z
    .union([Decimal, z.null()])
    .optional()
    .transform((value) => value ?? '0.00'),
  (value) => (value === undefined || value === null ? '0.00' : readDecimal(value)),
);

/** The dates and amounts GetInvoices rows and GetInvoice share. */
const INVOICE_FIGURES = {
  date: LocalTime,
  duedate: LocalTime,
  datepaid: LocalTime,
  subtotal: Decimal,
  credit: Decimal,
  tax: Tax,
  tax2: Tax,
  total: Decimal,
};

const CURRENCY = /^[A-Z]{3}$/;

/** Only in newer versions; otherwise (or when odd) the invoice is in the client's currency. */
const InvoiceCurrency = withReader(z.string().regex(CURRENCY).optional().catch(undefined), (value) =>
  typeof value === 'string' && CURRENCY.test(value) ? value : value === undefined ? undefined : UNREAD,
);

/** A GetInvoices row's fields. */
export const INVOICE_ROW = {
  id: Id,
  userid: Id,
  invoicenum: TextOrNone,
  ...INVOICE_FIGURES,
  status: InvoiceStatus,
  currencycode: InvoiceCurrency,
};

/** A GetInvoices row, read in one step when every field is in its usual form (src/backend/one-step-field.ts). */
export const Invoice = oneStepObject(INVOICE_ROW);
export type RawInvoice = z.output<typeof Invoice>;

/** GetInvoices: `invoices` is [] when there are none. */
export const InvoicesAnswer = z
  .object({ totalresults: Count, startnumber: StartNumber, invoices: collection('invoice', Invoice) })
  .superRefine(rowsDue('invoices'));

const InvoiceItem = z.object({ description: TextOrNone, amount: Decimal, taxed: Flag });

/** The rate of a tax level; absent, null or "" means none is stated. */
const TaxRate = z
  .union([Decimal, z.literal(''), z.null()])
  .optional()
  .transform((value) => (value === undefined || value === null || value === '' ? null : value));

export const isZero = (decimal: string): boolean => /^-?0+\.0+$/.test(decimal);

/** GetInvoice: `items` is absent without items (then the subtotal is zero), `transactions` is "" (not read). */
export const InvoiceAnswer = z
  .object({
    invoiceid: Id,
    invoicenum: TextOrNone,
    userid: Id,
    ...INVOICE_FIGURES,
    balance: Decimal,
    taxrate: TaxRate,
    taxrate2: TaxRate,
    status: InvoiceStatus,
    items: collection('item', InvoiceItem),
  })
  .superRefine((invoice, ctx) => {
    if (invoice.items.length === 0 && !isZero(invoice.subtotal)) {
      ctx.addIssue({ code: 'custom', path: ['items'], message: `absent or empty although the subtotal is ${invoice.subtotal}` });
    }
  });
export type RawInvoiceDocument = z.output<typeof InvoiceAnswer>;
