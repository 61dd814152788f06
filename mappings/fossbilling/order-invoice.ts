/**
 * Which invoice an order shows, and whether it was refunded: FOSSBilling links an order's invoice
 * only while it is unpaid, so the mapping searches the invoices by order (operations.ts).
 */
import type { RawInvoice, RawOrder } from './parse.js';

/** The invoice FOSSBilling links to the order: only while it is unpaid (paying it clears the link). */
export function unpaidInvoiceOf(order: RawOrder): string | null {
  return order.unpaid_invoice_id && order.unpaid_invoice_id !== '0' ? order.unpaid_invoice_id : null;
}

/** What an `order_id` search tells of an order's billing: its latest invoice, and whether a refund followed it. */
export interface OrderInvoice {
  invoice: RawInvoice;
  refunded: boolean;
}

const byIdDesc = (left: RawInvoice, right: RawInvoice): number => right.id.length - left.id.length || (right.id < left.id ? -1 : right.id > left.id ? 1 : 0);

/** The invoice's lines for the order, summed (a credit note's are negative). */
function orderLinesTotal(invoice: RawInvoice, orderId: string): number {
  return invoice.lines.filter((line) => line.order_id === orderId).reduce((sum, line) => sum + Number(line.total ?? 0), 0);
}

/**
 * A refund FOSSBilling issued (Invoice/Service.php refundInvoice, logic credit_note or
 * negative_invoice): a new invoice of status `refunded` whose lines are the refunded one's, negated
 * (same type and rel_id). The refunded invoice itself keeps its status `paid`.
 */
function isCreditNote(invoice: RawInvoice, orderId: string): boolean {
  return invoice.status === 'refunded' && orderLinesTotal(invoice, orderId) < 0;
}

/**
 * The order's invoice among those an `order_id` search found: the one FOSSBilling links (`linked`,
 * its unpaid_invoice_id), else the newest of the client's with a line for the order that is not a
 * credit note; refunded when a credit note for the order came after it. The linked one is read for
 * its status: `invoice/update` can cancel it (or set it paid) and leave the link, which only
 * markAsPaid and rmInvoice clear. The newest is the invoice FOSSBilling links while it is unpaid,
 * so paying it does not switch the order to an older one. Only invoices of the client that show
 * such a line count: a FOSSBilling that ignored the filter would list the client's other invoices.
 */
export function invoiceOfOrder(invoices: RawInvoice[], clientId: string, orderId: string, linked: string | null): OrderInvoice | null {
  const mine = invoices.filter((invoice) => invoice.client_id === clientId && invoice.lines.some((line) => line.order_id === orderId)).sort(byIdDesc);
  const index = linked === null ? mine.findIndex((invoice) => !isCreditNote(invoice, orderId)) : mine.findIndex((invoice) => invoice.id === linked);
  if (index === -1) return null;
  return { invoice: mine[index] as RawInvoice, refunded: mine.slice(0, index).some((invoice) => isCreditNote(invoice, orderId)) };
}
