/**
 * The drawing steps an invoice's layout is made of (src/pdf/invoice-pdf.ts): A4 pages filled top
 * to bottom from a cursor, a new page added whenever the next block would not fit.
 */
import { PageSizes, rgb, type Color, type PDFDocument, type PDFFont, type PDFPage } from 'pdf-lib';
import { fit, limitLines, wrap } from './text.js';

export const [PAGE_WIDTH, PAGE_HEIGHT] = PageSizes.A4 as [number, number];
export const MARGIN = 50;
export const LEFT = MARGIN;
export const RIGHT = PAGE_WIDTH - MARGIN;
export const CELL_PADDING = 8;

export const INK = rgb(0.13, 0.14, 0.16);
export const MUTED = rgb(0.42, 0.44, 0.48);
export const RULE = rgb(0.85, 0.86, 0.88);
export const SHADE = rgb(0.95, 0.96, 0.97);
export const ACCENT = rgb(0.13, 0.3, 0.55);
const ACCENT_SHADE = rgb(0.91, 0.94, 0.98);

export interface Fonts {
  regular: PDFFont;
  bold: PDFFont;
}

export interface TextStyle {
  font: PDFFont;
  size: number;
  color?: Color;
}

export class Canvas {
  protected page!: PDFPage;
  /** The top of the free space on the current page. */
  protected cursor = 0;

  /** `title` heads each continuation page; content stops at `contentBottom`, above the footer. */
  constructor(
    protected readonly doc: PDFDocument,
    protected readonly fonts: Fonts,
    protected readonly title: string,
    protected readonly contentBottom: number,
  ) {
    this.addPage();
  }

  protected addPage(): void {
    this.page = this.doc.addPage([PAGE_WIDTH, PAGE_HEIGHT]);
    this.cursor = PAGE_HEIGHT - MARGIN;
    if (this.doc.getPageCount() === 1) return;
    // Continuation pages repeat who and what, so a loose page can still be placed.
    this.writeText(`${this.title} (continued)`, LEFT, RIGHT - LEFT, { font: this.fonts.bold, size: 11 }, 16);
    this.cursor -= 6;
    this.drawRule(LEFT, RIGHT, 0.75);
    this.cursor -= 16;
  }

  protected ensureSpace(height: number): void {
    if (this.cursor - height < this.contentBottom) this.addPage();
  }

  protected drawBadge(badge: { label: string; color: Color }): void {
    const style = { font: this.fonts.bold, size: 8.5, color: rgb(1, 1, 1) };
    const width = style.font.widthOfTextAtSize(badge.label, style.size) + 14;
    const height = 16;
    this.page.drawRectangle({ x: RIGHT - width, y: this.cursor - height, width, height, color: badge.color });
    this.page.drawText(badge.label, { x: RIGHT - width + 7, y: this.cursor - 11.5, ...style });
    this.cursor -= height;
  }

  /** A label and its value flush right, on one line of a block from `blockLeft` to the right margin. */
  protected drawPair(label: string, value: string, blockLeft: number, style: TextStyle, leading: number): void {
    const left = blockLeft + CELL_PADDING;
    const right = RIGHT - CELL_PADDING;
    const baseline = this.cursor - style.size;
    const valueWidth = Math.min(style.font.widthOfTextAtSize(value, style.size), (right - left) * 0.65);
    this.page.drawText(fit(label, style.font, style.size, right - left - valueWidth - 10), {
      x: left,
      y: baseline,
      color: MUTED,
      ...style,
    });
    this.drawTextRight(fit(value, style.font, style.size, valueWidth), right, baseline, { ...style, color: INK });
    this.cursor -= leading;
  }

  /** The figure the reader is looking for: shaded, bold, in the accent colour. */
  protected drawShadedPair(label: string, value: string, left: number): void {
    const height = 24;
    this.page.drawRectangle({ x: left, y: this.cursor - height, width: RIGHT - left, height, color: ACCENT_SHADE });
    this.cursor -= 6;
    this.drawPair(label, value, left, { font: this.fonts.bold, size: 11, color: ACCENT }, height - 6);
  }

  protected drawRule(from: number, to: number, thickness: number): void {
    this.page.drawLine({ start: { x: from, y: this.cursor }, end: { x: to, y: this.cursor }, thickness, color: RULE });
  }

  /** Writes text from the cursor down, wrapped to the width; past `maxLines` it is cut with an ellipsis. */
  protected writeText(text: string, x: number, width: number, style: TextStyle, leading: number, maxLines = 1): void {
    for (const line of limitLines(wrap(text, style.font, style.size, width), maxLines, style.font, style.size, width)) {
      this.page.drawText(line, { x, y: this.cursor - style.size, color: INK, ...style });
      this.cursor -= leading;
    }
  }

  protected drawTextRight(line: string, right: number, baseline: number, style: TextStyle): void {
    const x = right - style.font.widthOfTextAtSize(line, style.size);
    this.page.drawText(line, { x, y: baseline, color: INK, ...style });
  }
}
