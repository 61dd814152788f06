/**
 * The invoice PDF is drawn synchronously on the event loop, from upstream data: up to 1 000 items
 * of up to 2 000 characters each. Word wrap re-measured the whole line for every character (and
 * for every word) it added, so an item cost its length times the line's: one such invoice took
 * 11-37 s of CPU before the fix (1 000 items of 2 000 narrow characters), stalling every tenant.
 * Counting the characters handed to the font's width measure is deterministic: it must grow with
 * the text, not with the text times the width of a line.
 */
import assert from 'node:assert/strict';
import { PDFDocument, PDFFont, StandardFonts } from 'pdf-lib';
import t from 'tap';
import { renderInvoicePdf } from '../../src/pdf/invoice-pdf.js';
import { wrap } from '../../src/pdf/text.js';
import { eur, invoiceWith, ISSUER, pageTexts } from '../pdf/pdf-text.js';

/** Counts the characters measured while `work` runs. */
async function measuredChars(work: () => Promise<unknown> | unknown): Promise<number> {
  const original = PDFFont.prototype.widthOfTextAtSize;
  let count = 0;
  PDFFont.prototype.widthOfTextAtSize = function (this: PDFFont, text: string, size: number) {
    count += text.length;
    return original.call(this, text, size);
  };
  try {
    await work();
  } finally {
    PDFFont.prototype.widthOfTextAtSize = original;
  }
  return count;
}

const DESCRIPTIONS: Array<[string, string]> = [
  ['one long word of narrow letters', 'i'.repeat(2000)],
  ['many one-letter words', 'i '.repeat(1000)],
  ['short words', 'ab '.repeat(666)],
];

t.test('wrapping a description measures each character a bounded number of times', async (t) => {
  const font = await (await PDFDocument.create()).embedFont(StandardFonts.Helvetica);
  for (const [name, text] of DESCRIPTIONS) {
    t.test(name, async () => {
      let lines: string[] = [];
      const count = await measuredChars(() => (lines = wrap(text, font, 10, 350)));
      assert.ok(lines.length > 5, 'the text is wrapped onto several lines');
      assert.ok(count <= 8 * text.length, `${count} characters measured to wrap ${text.length}: the cost grows with the line width`);
    });
  }
});

t.test('a whole invoice of 1 000 long items is measured in proportion to its text', async () => {
  const items = Array.from({ length: 1000 }, () => ({ description: 'i'.repeat(2000), amount: eur('1.00'), taxed: false }));
  const count = await measuredChars(() => renderInvoicePdf(invoiceWith({ items }), ISSUER));
  assert.ok(count <= 8 * 2000 * 1000, `${count} characters measured for 2 000 000 characters of items`);
});

t.test('lines wrap where they did', async () => {
  const font = await (await PDFDocument.create()).embedFont(StandardFonts.Helvetica);
  const width = 120;
  for (const text of ['Domain Renewal - example.com - 1 Year/s (01/01/2026 - 31/12/2026)', 'W'.repeat(50), 'AV To Wa yo '.repeat(8), 'a Superlongwordthatcannotfitononelineatall b']) {
    const lines = wrap(text, font, 10, width);
    assert.equal(lines.join(' ').replace(/ /g, ''), text.replace(/ /g, ''), 'no character lost');
    for (const line of lines) assert.ok(font.widthOfTextAtSize(line, 10) <= width + 1e-9, `"${line}" fits`);
    // Greedy: the next line's first word (or character) would not have fitted.
    lines.slice(1).forEach((line, index) => {
      const next = line.split(' ')[0] as string;
      const joined = (lines[index] as string).length > 0 && text.includes(`${lines[index]} ${next}`) ? `${lines[index]} ${next}` : `${lines[index]}${next[0]}`;
      assert.ok(font.widthOfTextAtSize(joined, 10) > width, `"${joined}" would not fit`);
    });
  }
  const [page = ''] = await pageTexts(await renderInvoicePdf(invoiceWith({ items: [{ description: 'x'.repeat(120), amount: eur('1.00'), taxed: false }] }), ISSUER));
  assert.ok(page.includes('x'.repeat(60)), 'a long word is still broken across lines');
});
