/**
 * Invoice PDFs print names, addresses and items in the scripts hosting companies' customers write
 * in: Latin Extended, Greek, Cyrillic (the bundled DejaVu Sans), not '?' for every letter.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { renderInvoicePdf } from '../../src/pdf/invoice-pdf.js';
import { eur, invoiceWith, ISSUER } from './pdf-text.js';
import { drawn } from './drawn-text.js';

const NAMES = ['Анна Кузнецова', 'Γιώργος Παπαδόπουλος', 'Łukasz Wróbel', 'Jiří Dvořák', 'Şükrü Ağaoğlu', 'Nguyễn Thị Hương'];

t.test('customer names in other scripts print as written', async () => {
  for (const name of NAMES) {
    const [page] = await drawn(await renderInvoicePdf(invoiceWith({ customer: { ...invoiceWith().customer, name } }), ISSUER));
    assert.ok(page?.lines.includes(name), `prints ${JSON.stringify(name)}; drew ${JSON.stringify(page?.lines.slice(6, 10))}`);
  }
});

t.test('company, address, item and issuer in Cyrillic, Greek and Latin Extended print as written', async () => {
  const invoice = invoiceWith({
    customer: { name: 'Ольга', company: 'ООО «Ромашка»', email: 'olga@example.ru', address: ['ул. Ленина, д. 5', 'Αθήνα 105 57', 'Kraków'], tax_id: null },
    items: [{ description: 'Хостинг — тариф «Бизнес»', amount: eur('12.00'), taxed: false }],
  });
  const issuer = { ...ISSUER, name: 'Żółć Hosting sp. z o.o.', footer: 'Płatność w ciągu 14 dni. Ευχαριστούμε.' };
  const [page] = await drawn(await renderInvoicePdf(invoice, issuer));
  for (const expected of ['ООО «Ромашка»', 'ул. Ленина, д. 5', 'Αθήνα 105 57', 'Kraków', 'Хостинг — тариф «Бизнес»', 'Żółć Hosting sp. z o.o.', 'Płatność w ciągu 14 dni. Ευχαριστούμε.']) {
    assert.ok(page?.lines.includes(expected), `prints ${JSON.stringify(expected)}`);
  }
  assert.ok(!page?.lines.some((line) => line.includes('?')), 'no letter printed as "?"');
});

t.test('text in decomposed form (a letter, then its accent) prints as the letter with its accent', async () => {
  const [page] = await drawn(await renderInvoicePdf(invoiceWith({ customer: { ...invoiceWith().customer, name: 'Zoe\u0308 Mu\u0308ller' } }), ISSUER));
  assert.ok(page?.lines.includes('Zoë Müller'), `drew ${JSON.stringify(page?.lines.slice(6, 10))}`);
});
