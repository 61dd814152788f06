/**
 * An invoice drawn with an embedded font still gives the same bytes every time, whatever was
 * rendered before it; the font is a subset (the file stays small) with a tag derived from the
 * invoice; an invoice in WinAnsi keeps the standard fonts.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { renderInvoicePdf } from '../../src/pdf/invoice-pdf.js';
import { eur, invoiceWith, ISSUER } from './pdf-text.js';
import { drawn } from './drawn-text.js';

const customer = invoiceWith().customer;
const GREEK = invoiceWith({ customer: { ...customer, name: 'Γιώργος Παπαδόπουλος', company: 'Young & Gray' } });
const CYRILLIC = invoiceWith({ number: 'INV-7', customer: { ...customer, name: 'Анна Кузнецова', address: ['ул. Тверская, д. 7', 'Москва'] } });

t.test('the same invoice gives the same bytes, before and after other invoices', async () => {
  const first = Buffer.from(await renderInvoicePdf(GREEK, ISSUER));
  const cyrillic = await drawn(await renderInvoicePdf(CYRILLIC, ISSUER));
  assert.ok(cyrillic[0]?.lines.includes('ул. Тверская, д. 7'), 'the Cyrillic invoice prints its address');
  const again = Buffer.from(await renderInvoicePdf(GREEK, ISSUER));
  assert.ok(first.equals(again), 'identical bytes');
  // Letters drawn from parts of others (Cyrillic у from y) are still copied as themselves afterwards.
  const [page] = await drawn(again);
  assert.ok(page?.lines.includes('Γιώργος Παπαδόπουλος') && page.lines.includes('Young & Gray'), `drew ${JSON.stringify(page?.lines.slice(8, 10))}`);
});

t.test('the font is a subset with a tag derived from the invoice, and the file stays small', async () => {
  const bytes = await renderInvoicePdf(GREEK, ISSUER);
  const [page] = await drawn(bytes);
  const names = new Set(page?.baseFonts);
  assert.equal(names.size, 2, `regular and bold: ${[...names].join(', ')}`);
  for (const name of names) assert.match(name, /^[A-Z]{6}\+DejaVuSans(-Bold)?$/);
  const tags = new Set([...names].map((name) => name.slice(0, 6)));
  const [other] = await drawn(await renderInvoicePdf(CYRILLIC, ISSUER));
  assert.ok(!other?.baseFonts.some((name) => tags.has(name.slice(0, 6))), 'another invoice, another tag');
  assert.ok(bytes.length < 60_000, `${bytes.length} bytes: a subset, not the 1.4 MB of both fonts`);
});

t.test('an invoice whose text is all WinAnsi keeps the standard fonts', async () => {
  const [page] = await drawn(await renderInvoicePdf(invoiceWith({ customer: { ...customer, name: 'José Müller' }, items: [{ description: 'Café €5', amount: eur('5.00'), taxed: false }] }), ISSUER));
  assert.deepEqual([...new Set(page?.baseFonts)].sort(), ['Helvetica', 'Helvetica-Bold']);
  assert.ok(page?.lines.includes('José Müller'));
});

t.test('an invoice no embedded font draws more of keeps the standard fonts too', async () => {
  const [page] = await drawn(await renderInvoicePdf(invoiceWith({ customer: { ...customer, name: '山田 Taro' } }), ISSUER));
  assert.deepEqual([...new Set(page?.baseFonts)].sort(), ['Helvetica', 'Helvetica-Bold']);
  assert.ok(page?.lines.includes('?? Taro'));
});
