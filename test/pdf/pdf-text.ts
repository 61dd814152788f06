/** The test invoice and issuer, and what an invoice PDF draws, read back from its content streams. */
import assert from 'node:assert/strict';
import { decodePDFRawStream, PDFArray, PDFDocument, PDFRawStream, type PDFObject } from 'pdf-lib';
import type { InvoiceIssuer } from '../../src/pdf/invoice-pdf.js';
import type { InvoiceDocument } from '../../src/v1/schemas.js';

export const eur = (amount: string) => ({ amount, currency: 'EUR' });

export const ISSUER: InvoiceIssuer = {
  name: 'Northwind Cloud Ltd',
  addressLines: ['12 Harbour Street', 'Bristol BS1 4DJ', 'United Kingdom'],
  email: 'accounts@northwind.example',
  taxId: 'GB123456789',
  footer: 'Registered in England and Wales, company no. 01234567.',
};

export function invoiceWith(overrides: Partial<InvoiceDocument> = {}): InvoiceDocument {
  return {
    id: '42',
    number: 'INV-2026-0042',
    status: 'unpaid',
    issued_on: '2026-02-01',
    due_on: '2026-02-15',
    paid_at: null,
    paid_on: null,
    subtotal: eur('1244.49'),
    tax: eur('248.90'),
    taxes: [{ rate: '20.00', amount: eur('248.90') }],
    credit: eur('10.00'),
    total: eur('1483.39'),
    amount_paid: eur('10.00'),
    balance: eur('1473.39'),
    items: [
      { description: 'Reseller Hosting Gold - shop.example.com (01/02/2026 - 28/02/2026)', amount: eur('1234.50'), taxed: true },
      { description: 'Domain renewal - example.org (1 year)', amount: eur('9.99'), taxed: false },
    ],
    customer: { name: 'Ada Lovelace', company: 'Analytical Engines plc', email: 'ada@engines.example', address: ['10 Marylebone Road', 'London NW1 5LR', 'United Kingdom'], tax_id: 'GB987654321' },
    ...overrides,
  };
}

/** WinAnsi bytes 0x80–0x9F; the rest is Latin-1. (Node's TextDecoder decodes windows-1252 as Latin-1.) */
const WIN_ANSI_HIGH = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008DŽ\u008F\u0090‘’“”•–—˜™š›œ\u009DžŸ';

function decodeWinAnsi(bytes: Buffer): string {
  return [...bytes].map((byte) => (byte >= 0x80 && byte <= 0x9f ? WIN_ANSI_HIGH[byte - 0x80] : String.fromCharCode(byte))).join('');
}

/** The strings each page draws, in order: pdf-lib writes standard-font text as `<hex> Tj`. */
export async function pageTexts(bytes: Uint8Array): Promise<string[]> {
  const doc = await PDFDocument.load(bytes);
  return doc.getPages().map((page) => {
    const contents: PDFObject | undefined = page.node.Contents();
    const streams = contents instanceof PDFArray ? contents.asArray().map((ref) => doc.context.lookup(ref)) : [contents];
    const source = streams
      .map((stream) => {
        assert.ok(stream instanceof PDFRawStream, 'content streams are raw streams once parsed');
        return Buffer.from(decodePDFRawStream(stream).decode()).toString('latin1');
      })
      .join('\n');
    return [...source.matchAll(/<([0-9A-Fa-f]*)>\s*Tj/g)]
      .map((match) => decodeWinAnsi(Buffer.from(match[1] ?? '', 'hex')))
      .join('\n');
  });
}

/** Every string the document draws, one an entry, pages in order. */
export async function drawnLines(bytes: Uint8Array): Promise<string[]> {
  return (await pageTexts(bytes)).flatMap((page) => page.split('\n'));
}
