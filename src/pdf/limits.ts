/**
 * What an invoice PDF draws at most (src/pdf/invoice-pdf.ts). Apart from the renderer, which loads
 * pdf-lib: the main thread cuts an invoice to its drawn items before handing it to the renderer's
 * thread (render-pool.ts).
 */
import type { InvoiceDocument } from '../v1/schemas.js';

/** Caps on hostile or broken data, so no single field can make the renderer slow or the file huge. */
export const LIMITS = {
  field: 200,
  addressLines: 6,
  description: 2000,
  descriptionLines: 20,
  footer: 1000,
  footerLines: 3,
  items: 1000,
} as const;

/** An invoice with the items a render draws; those past LIMITS.items only counted. */
export interface DrawnInvoice {
  invoice: InvoiceDocument;
  hiddenItems: number;
}

/**
 * Copying an invoice to another thread costs in proportion to its items: 100 000 of them (a hostile
 * upstream's answer within maxResponseBytes) took half a second of the main thread to copy,
 * for a render that draws the first 1 000.
 */
export function drawnItems(invoice: InvoiceDocument): DrawnInvoice {
  if (invoice.items.length <= LIMITS.items) return { invoice, hiddenItems: 0 };
  return { invoice: { ...invoice, items: invoice.items.slice(0, LIMITS.items) }, hiddenItems: invoice.items.length - LIMITS.items };
}
