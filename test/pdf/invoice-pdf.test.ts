import t from 'tap';
import assert from 'node:assert/strict';
import { PDFDocument } from 'pdf-lib';
import { renderInvoicePdf } from '../../src/pdf/invoice-pdf.js';
import { drawn } from './drawn-text.js';
import { eur, invoiceWith, ISSUER, pageTexts } from './pdf-text.js';

t.test('renderInvoicePdf', async (t) => {
  t.test('gives identical bytes for the same invoice', async () => {
    const first = await renderInvoicePdf(invoiceWith(), ISSUER);
    const second = await renderInvoicePdf(invoiceWith(), ISSUER);
    assert.deepEqual(Buffer.from(first), Buffer.from(second));
    const other = await renderInvoicePdf(invoiceWith({ number: 'INV-2026-0043' }), ISSUER);
    assert.notDeepEqual(Buffer.from(first), Buffer.from(other));
  });

  t.test('writes a PDF that pdf-lib parses back, with fixed metadata dated by the invoice', async () => {
    const bytes = await renderInvoicePdf(invoiceWith(), ISSUER);
    assert.equal(Buffer.from(bytes.subarray(0, 5)).toString('latin1'), '%PDF-');
    const doc = await PDFDocument.load(bytes, { updateMetadata: false });
    assert.equal(doc.getPageCount(), 1);
    const { width, height } = doc.getPage(0).getSize();
    assert.deepEqual([Math.round(width), Math.round(height)], [595, 842]);
    assert.equal(doc.getTitle(), 'Invoice INV-2026-0042');
    assert.equal(doc.getProducer(), 'reseller-gateway');
    assert.equal(doc.getCreator(), 'reseller-gateway');
    assert.equal(doc.getCreationDate()?.toISOString(), '2026-02-01T00:00:00.000Z');
    assert.equal(doc.getModificationDate()?.toISOString(), '2026-02-01T00:00:00.000Z');
  });

  t.test('shows the issuer, number, customer, dates, status, items and totals with their currency', async () => {
    const [text = ''] = await pageTexts(await renderInvoicePdf(invoiceWith(), ISSUER));
    for (const expected of [
      'Northwind Cloud Ltd',
      '12 Harbour Street',
      'accounts@northwind.example',
      'Tax ID: GB123456789',
      'Invoice INV-2026-0042',
      'UNPAID',
      'Ada Lovelace',
      'Analytical Engines plc',
      'ada@engines.example',
      '1 Feb 2026',
      '15 Feb 2026',
      'Reseller Hosting Gold - shop.example.com (01/02/2026 - 28/02/2026) *',
      'Domain renewal - example.org (1 year)',
      '1,234.50 EUR',
      '9.99 EUR',
      'Subtotal',
      '1,244.49 EUR',
      'Tax (20.00%)',
      '248.90 EUR',
      'Credit applied',
      '10.00 EUR',
      'Total',
      '1,483.39 EUR',
      'Balance due',
      '1,473.39 EUR',
      'Registered in England and Wales, company no. 01234567.',
      'Page 1 of 1',
    ]) {
      assert.ok(text.split('\n').includes(expected), `page shows ${JSON.stringify(expected)}`);
    }
    assert.ok(!text.includes('Paid on'), 'no payment date while unpaid');
  });

  t.test('labels the tax without a rate when the billing system states none', async () => {
    const [text = ''] = await pageTexts(await renderInvoicePdf(invoiceWith({ taxes: [{ rate: null, amount: eur('248.90') }] }), ISSUER));
    const lines = text.split('\n');
    assert.ok(lines.includes('Tax'), 'a plain "Tax" label');
    assert.ok(!lines.some((line) => line.startsWith('Tax (')), 'no invented rate');
    assert.ok(lines.includes('248.90 EUR'), 'the tax amount is still shown');
  });

  t.test('shows the payment date once paid, and "#id" when the invoice has no number', async () => {
    const bytes = await renderInvoicePdf(invoiceWith({ number: '', status: 'paid', paid_at: '2026-02-03T10:15:00Z', paid_on: '2026-02-03' }), ISSUER);
    const [text = ''] = await pageTexts(bytes);
    for (const expected of ['Invoice #42', 'PAID', 'Paid on', '3 Feb 2026']) {
      assert.ok(text.split('\n').includes(expected), `page shows ${JSON.stringify(expected)}`);
    }
  });

  t.test('continues a long item list onto further pages, numbered "Page n of N"', async () => {
    const items = Array.from({ length: 120 }, (_, index) => ({
      description: `Service ${index + 1}: VPS Small (monthly)`,
      amount: eur('9.99'),
      taxed: false,
    }));
    const bytes = await renderInvoicePdf(invoiceWith({ items }), ISSUER);
    const pages = await pageTexts(bytes);
    assert.ok(pages.length >= 3, `expected several pages, got ${pages.length}`);
    assert.equal((await PDFDocument.load(bytes)).getPageCount(), pages.length);
    pages.forEach((page, index) => assert.ok(page.includes(`Page ${index + 1} of ${pages.length}`)));
    assert.ok(pages[1]?.includes('Invoice INV-2026-0042 (continued)'));

    const drawn = pages.flatMap((page) => page.split('\n')).filter((line) => line.startsWith('Service '));
    assert.deepEqual(drawn, items.map((item) => item.description), 'every item once, in order');
    assert.ok(pages.at(-1)?.includes('Balance due'), 'totals close the last page');
  });

  t.test('draws text no font has, degrading it instead of throwing', async () => {
    const bytes = await renderInvoicePdf(
      invoiceWith({
        customer: { name: 'Łukasz Żółć', company: '山田商事株式会社', email: 'yamada@例え.jp', address: ['東京都'], tax_id: null },
        items: [
          { description: 'Сервер — 서버 — خادم — 😀 — Ａｃｍｅ — ﬁle — zero\u200bwidth\u202e — bell\u0007', amount: eur('1.00'), taxed: false },
        ],
      }),
      { ...ISSUER, name: 'Société Générale d’Hébergement', footer: 'Ελληνικά' },
    );
    const [page] = await drawn(bytes);
    const lines = page?.lines ?? [];
    assert.ok(lines.includes('Łukasz Żółć'), 'Latin Extended is drawn by the bundled font');
    assert.ok(lines.includes('????????'), 'one ? per character no font draws');
    // Arabic is never drawn (no shaping, no bidi); format characters are dropped; fullwidth letters lose their width.
    assert.ok(lines.includes('Сервер — ?? — ???? — 😀 — Acme — ﬁle — zerowidth — bell'), JSON.stringify(lines));
    assert.ok(lines.includes('yamada@??.jp'));
    assert.ok(lines.includes('Ελληνικά'));
    assert.ok(lines.includes('Société Générale'), 'WinAnsi letters are kept');
    assert.ok(lines.includes('d’Hébergement'), 'WinAnsi punctuation is kept');
  });

  t.test('keeps hostile field sizes and item counts bounded', async () => {
    const huge = 'W'.repeat(200_000);
    const items = Array.from({ length: 1500 }, (_, index) => ({ description: `Line ${index}`, amount: eur('0.01'), taxed: false }));
    const bytes = await renderInvoicePdf(
      invoiceWith({
        number: huge,
        customer: { name: huge, company: huge, email: huge, address: Array.from({ length: 1000 }, () => huge), tax_id: huge },
        items: [{ description: `${huge}\n${'\n'.repeat(10_000)}`, amount: eur('1.00'), taxed: false }, ...items],
      }),
      { name: huge, addressLines: Array.from({ length: 1000 }, () => huge), email: huge, taxId: huge, footer: huge },
    );
    assert.ok(bytes.length < 1_000_000, `file stays small (${bytes.length} bytes)`);
    const pages = await pageTexts(bytes);
    assert.ok(pages.length < 60, `page count stays bounded (${pages.length})`);
    assert.ok(pages.some((page) => page.includes('… and 501 further items not shown')), 'says what was left out');
    for (const page of pages) {
      for (const line of page.split('\n')) assert.ok(line.length <= 200, `no line runs off: ${line.length} characters`);
    }
  });
});
