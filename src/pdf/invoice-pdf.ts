/**
 * Renders an invoice as a printable A4 PDF, with the fonts its text needs (fonts.ts). The bytes
 * depend on the input alone: metadata dates come from the invoice and nothing random or
 * clock-based is written, so the same invoice always gives the same file.
 */
import { PDFDocument, rgb, type Color } from 'pdf-lib';
import type { Invoice, InvoiceDocument, Money } from '../v1/schemas.js';
import { ACCENT, Canvas, CELL_PADDING, INK, LEFT, MARGIN, MUTED, RIGHT, RULE, SHADE, type Fonts } from './canvas.js';
import { FontBook } from './fonts.js';
import { LIMITS } from './limits.js';
import { fit, formatDate, formatMoney, limitLines, parseDate, PlainText, wrap } from './text.js';

export interface InvoiceIssuer {
  name: string;
  addressLines: string[];
  email?: string;
  taxId?: string;
  footer?: string;
}

const AMOUNT_COLUMN = 130;
const TOTALS_WIDTH = 250;

const STATUS_BADGES: Record<Invoice['status'], { label: string; color: Color }> = {
  draft: { label: 'DRAFT', color: rgb(0.45, 0.47, 0.5) },
  unpaid: { label: 'UNPAID', color: rgb(0.75, 0.22, 0.17) },
  paid: { label: 'PAID', color: rgb(0.16, 0.55, 0.3) },
  cancelled: { label: 'CANCELLED', color: rgb(0.45, 0.47, 0.5) },
  refunded: { label: 'REFUNDED', color: rgb(0.45, 0.47, 0.5) },
  collections: { label: 'COLLECTIONS', color: rgb(0.75, 0.22, 0.17) },
  payment_pending: { label: 'PAYMENT PENDING', color: rgb(0.8, 0.5, 0.1) },
  other: { label: 'OTHER', color: rgb(0.45, 0.47, 0.5) },
};

/** The bundled fonts, for a render not given a thread's FontBook: loaded once. */
let bundled: Promise<FontBook> | undefined;

/**
 * `hiddenItems`: items already cut off the invoice (limits.ts, drawnItems), counted with those past
 * the limit. `book`: the thread's fonts (render-worker.ts); the bundled ones when not given.
 */
export async function renderInvoicePdf(invoice: InvoiceDocument, issuer: InvoiceIssuer, hiddenItems = 0, book?: FontBook): Promise<Uint8Array> {
  // updateMetadata: false keeps pdf-lib from stamping the current time and its own name.
  const doc = await PDFDocument.create({ updateMetadata: false });
  const fontBook = book ?? (await (bundled ??= FontBook.load()));
  const { fonts, drawable } = await fontBook.embed(doc, stringsOf([invoice, issuer]), JSON.stringify([invoice, issuer, hiddenItems]));
  const text = new PlainText(drawable);

  const title = `Invoice ${text.line(invoice.number, LIMITS.field) || `#${text.line(invoice.id, LIMITS.field)}`}`;
  const documentDate = parseDate(invoice.issued_on) ?? new Date(0);
  doc.setTitle(title);
  doc.setAuthor(text.line(issuer.name, LIMITS.field));
  doc.setCreator('reseller-gateway');
  doc.setProducer('reseller-gateway');
  doc.setCreationDate(documentDate);
  doc.setModificationDate(documentDate);
  doc.setLanguage('en');

  const footerWidth = RIGHT - LEFT - 90; // leaves room for "Page n of N"
  const footer = text.lines(issuer.footer ?? '', LIMITS.footer).flatMap((line) => wrap(line, fonts.regular, 8, footerWidth));
  const layout = new Layout(doc, fonts, text, title, limitLines(footer, LIMITS.footerLines, fonts.regular, 8, footerWidth));
  layout.drawHeader(invoice, issuer);
  layout.drawItems(invoice, hiddenItems);
  layout.drawTotals(invoice);
  layout.drawFooters();
  return doc.save();
}

/** Every string in the data, drawn or not: what the fonts are chosen for. */
function stringsOf(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') into.push(value);
  else if (typeof value === 'object' && value !== null) for (const each of Object.values(value)) stringsOf(each, into);
  return into;
}

/** The invoice's blocks, top to bottom: header, items, totals, and the footers once the pages are counted. */
class Layout extends Canvas {
  constructor(
    doc: PDFDocument,
    fonts: Fonts,
    private readonly text: PlainText,
    title: string,
    private readonly footerLines: string[],
  ) {
    super(doc, fonts, title, MARGIN + Math.max(footerLines.length, 1) * 10 + 24);
  }

  drawHeader(invoice: InvoiceDocument, issuer: InvoiceIssuer): void {
    const { regular, bold } = this.fonts;
    const top = this.cursor;
    const columnWidth = 250;

    // Issuer, top left.
    this.writeText(this.text.line(issuer.name, LIMITS.field), LEFT, columnWidth, { font: bold, size: 16 }, 20, 2);
    this.cursor -= 2;
    const issuerLines = issuer.addressLines.slice(0, LIMITS.addressLines).map((line) => this.text.line(line, LIMITS.field));
    if (issuer.email !== undefined) issuerLines.push(this.text.line(issuer.email, LIMITS.field));
    if (issuer.taxId !== undefined) issuerLines.push(`Tax ID: ${this.text.line(issuer.taxId, LIMITS.field)}`);
    for (const line of issuerLines) this.writeText(line, LEFT, columnWidth, { font: regular, size: 9, color: MUTED }, 12.5);
    const issuerBottom = this.cursor;

    // Title and status, top right.
    this.cursor = top;
    // A long invoice number gets a smaller title, then a second line, and is cut only after that.
    const titleSize = Math.max(14, Math.min(20, (20 * columnWidth) / bold.widthOfTextAtSize(this.title, 20)));
    const titleStyle = { font: bold, size: titleSize, color: ACCENT };
    for (const line of limitLines(wrap(this.title, bold, titleSize, columnWidth), 2, bold, titleSize, columnWidth)) {
      this.drawTextRight(line, RIGHT, this.cursor - titleSize, titleStyle);
      this.cursor -= titleSize * 1.25;
    }
    this.cursor -= 5;
    // The type says the status is known; the fallback is for data that slipped past the schema.
    this.drawBadge(STATUS_BADGES[invoice.status] ?? STATUS_BADGES.other);

    this.cursor = Math.min(issuerBottom, this.cursor) - 18;
    this.drawRule(LEFT, RIGHT, 0.75);
    this.cursor -= 18;

    // Customer, left; dates and amount due, right.
    const blockTop = this.cursor;
    const { name, company, email, address, tax_id: taxId } = invoice.customer;
    this.writeText('BILL TO', LEFT, columnWidth, { font: bold, size: 8, color: MUTED }, 14);
    this.writeText(this.text.line(name, LIMITS.field), LEFT, columnWidth, { font: bold, size: 11 }, 15, 2);
    if (company !== null && company.trim() !== '') {
      this.writeText(this.text.line(company, LIMITS.field), LEFT, columnWidth, { font: regular, size: 10 }, 14, 2);
    }
    for (const line of address.slice(0, LIMITS.addressLines)) {
      this.writeText(this.text.line(line, LIMITS.field), LEFT, columnWidth, { font: regular, size: 10 }, 14);
    }
    if (taxId !== null) this.writeText(this.text.line(`Tax ID: ${taxId}`, LIMITS.field), LEFT, columnWidth, { font: regular, size: 10 }, 14);
    this.writeText(this.text.line(email, LIMITS.field), LEFT, columnWidth, { font: regular, size: 10, color: MUTED }, 14);
    const customerBottom = this.cursor;

    this.cursor = blockTop;
    const factsLeft = RIGHT - TOTALS_WIDTH;
    const facts: Array<[string, string]> = [
      ['Invoice date', formatDate(invoice.issued_on)],
      ['Due date', formatDate(invoice.due_on)],
    ];
    // A refunded or cancelled invoice keeps its payment date upstream; only a paid one states it.
    if (invoice.status === 'paid' && invoice.paid_on !== null) facts.push(['Paid on', formatDate(invoice.paid_on)]);
    for (const [label, value] of facts) {
      this.drawPair(label, value, factsLeft, { font: regular, size: 9.5 }, 15);
    }
    this.cursor -= 4;
    this.drawShadedPair('Amount due', this.money(invoice.balance), factsLeft);

    this.cursor = Math.min(customerBottom, this.cursor) - 26;
  }

  drawItems(invoice: InvoiceDocument, hiddenItems: number): void {
    this.drawTableHeader();
    const shown = invoice.items.slice(0, LIMITS.items);
    for (const item of shown) this.drawItemRow(item.description, this.money(item.amount), item.taxed);
    const hidden = invoice.items.length - shown.length + hiddenItems;
    if (hidden > 0) this.drawItemRow(`… and ${hidden} further items not shown`, '', false);
    if (shown.some((item) => item.taxed)) {
      this.ensureSpace(18);
      this.cursor -= 6;
      this.writeText('* Item subject to tax', LEFT, RIGHT - LEFT, { font: this.fonts.regular, size: 8, color: MUTED }, 12);
    }
  }

  drawTotals(invoice: InvoiceDocument): void {
    const { regular, bold } = this.fonts;
    const left = RIGHT - TOTALS_WIDTH;
    const rows: Array<[string, Money]> = [
      ['Subtotal', invoice.subtotal],
      ...invoice.taxes.map(({ rate, amount }): [string, Money] => [rate === null ? 'Tax' : `Tax (${this.text.line(rate, 20)}%)`, amount]),
      ['Credit applied', invoice.credit],
    ];
    this.ensureSpace(14 + rows.length * 17 + 12 + 20 + 17 + 4 + 24);
    this.cursor -= 14;

    for (const [label, amount] of rows) {
      this.drawPair(label, this.money(amount), left, { font: regular, size: 10 }, 17);
    }
    this.cursor -= 4;
    this.drawRule(left, RIGHT, 0.75);
    this.cursor -= 8;
    this.drawPair('Total', this.money(invoice.total), left, { font: bold, size: 11, color: INK }, 20);
    this.drawPair('Amount paid', this.money(invoice.amount_paid), left, { font: regular, size: 10 }, 17);
    this.cursor -= 4;
    this.drawShadedPair('Balance due', this.money(invoice.balance), left);
  }

  /** Page numbers need the final page count, so every footer is drawn once the content is done. */
  drawFooters(): void {
    const pages = this.doc.getPages();
    const style = { font: this.fonts.regular, size: 8, color: MUTED };
    const ruleY = MARGIN + Math.max(this.footerLines.length, 1) * 10 + 6;
    pages.forEach((page, index) => {
      page.drawLine({ start: { x: LEFT, y: ruleY }, end: { x: RIGHT, y: ruleY }, thickness: 0.5, color: RULE });
      this.footerLines.forEach((line, lineIndex) => {
        page.drawText(line, { x: LEFT, y: ruleY - 14 - lineIndex * 10, ...style });
      });
      const label = `Page ${index + 1} of ${pages.length}`;
      page.drawText(label, { x: RIGHT - style.font.widthOfTextAtSize(label, style.size), y: ruleY - 14, ...style });
    });
  }

  private drawTableHeader(): void {
    const style = { font: this.fonts.bold, size: 8.5, color: MUTED };
    const height = 22;
    this.page.drawRectangle({ x: LEFT, y: this.cursor - height, width: RIGHT - LEFT, height, color: SHADE });
    const baseline = this.cursor - 14.5;
    this.page.drawText('DESCRIPTION', { x: LEFT + CELL_PADDING, y: baseline, ...style });
    this.drawTextRight('AMOUNT', RIGHT - CELL_PADDING, baseline, style);
    this.cursor -= height;
  }

  private drawItemRow(rawDescription: string, amount: string, taxed: boolean): void {
    const style = { font: this.fonts.regular, size: 10 };
    const leading = 13.5;
    const width = RIGHT - LEFT - AMOUNT_COLUMN - 2 * CELL_PADDING;
    const paragraphs = this.text.lines(rawDescription, LIMITS.description);
    if (taxed) paragraphs[0] = `${paragraphs[0] ?? ''} *`;
    // One line past the limit is enough for limitLines to mark the cut: the rest is not wrapped.
    const wrapped: string[] = [];
    for (const paragraph of paragraphs) {
      if (wrapped.length > LIMITS.descriptionLines) break;
      wrapped.push(...wrap(paragraph, style.font, style.size, width));
    }
    const lines = wrapped.length === 0 ? [''] : limitLines(wrapped, LIMITS.descriptionLines, style.font, style.size, width);

    const height = lines.length * leading + 2 * 7;
    if (this.cursor - height < this.contentBottom) {
      this.addPage();
      this.drawTableHeader();
    }
    const firstBaseline = this.cursor - 7 - style.size;
    lines.forEach((line, index) => {
      this.page.drawText(line, { x: LEFT + CELL_PADDING, y: firstBaseline - index * leading, color: INK, ...style });
    });
    this.drawTextRight(fit(amount, style.font, style.size, AMOUNT_COLUMN), RIGHT - CELL_PADDING, firstBaseline, style);
    this.cursor -= height;
    this.drawRule(LEFT, RIGHT, 0.5);
  }

  private money(money: Money): string {
    return formatMoney(money, this.text);
  }
}
