/**
 * The figures an invoice PDF states, against what the billing system holds: a partly paid invoice
 * adds up on the page, the paid date is the billing system's own, only a paid invoice has one, and
 * WHMCS's two tax levels each show under their own rate.
 */
import t from 'tap';
import assert from 'node:assert/strict';
import { renderInvoicePdf } from '../../src/pdf/invoice-pdf.js';
import { mapInvoiceDocument } from '../../mappings/whmcs/map.js';
import { InvoiceAnswer } from '../../mappings/whmcs/parse-invoices.js';
import { drawnLines, invoiceWith, ISSUER } from './pdf-text.js';

const client = {
  firstname: 'Ada', lastname: 'L', companyname: '', email: 'a@example.com', status: 'active', currency_code: 'EUR',
  address1: 'Hauptstraße 1', address2: '', city: 'Berlin', state: 'Berlin', postcode: '10115', countryname: 'Germany', tax_id: 'DE123456789',
};

t.test('a partly paid WHMCS invoice shows what was paid, so Total − paid = Balance due on the page', async () => {
  // GetInvoice's balance is the total minus the payments in `transactions` (here 50.00 of 120.00).
  const answer = InvoiceAnswer.parse({
    invoiceid: 1, invoicenum: '', userid: 1, date: '2026-02-20', duedate: '2026-03-01', datepaid: '0000-00-00 00:00:00',
    subtotal: '100.00', credit: '0.00', tax: '20.00', tax2: '0.00', total: '120.00', balance: '70.00', taxrate: '20.00',
    status: 'Unpaid', items: { item: [{ description: 'VPS', amount: '100.00', taxed: 1 }] },
    transactions: { transaction: [{ id: 9, amountin: '50.00', amountout: '0.00' }] },
  });
  const lines = await drawnLines(await renderInvoicePdf(mapInvoiceDocument(answer, client as never, 'UTC'), ISSUER));
  const at = (label: string) => lines[lines.indexOf(label) + 1];
  assert.equal(at('Total'), '120.00 EUR');
  assert.equal(at('Amount paid'), '50.00 EUR');
  assert.equal(at('Balance due'), '70.00 EUR');
});

t.test('the paid date is the billing system’s local date, not the UTC one', async () => {
  // Paid at 00:30 in Berlin on 1 March is 23:30 UTC on 28 February.
  const raw = InvoiceAnswer.parse({
    invoiceid: 1, invoicenum: '', userid: 1, date: '2026-02-20', duedate: '2026-03-01', datepaid: '2026-03-01 00:30:00',
    subtotal: '10.00', credit: '0.00', tax: '0.00', tax2: '0.00', total: '10.00', balance: '0.00', taxrate: '0.000',
    status: 'Paid', items: { item: [{ description: 'VPS', amount: '10.00', taxed: 0 }] }, transactions: '',
  });
  const document = mapInvoiceDocument(raw, client as never, 'Europe/Berlin');
  assert.equal(document.paid_at, '2026-02-28T23:30:00Z');
  const lines = await drawnLines(await renderInvoicePdf(document, ISSUER));
  assert.ok(lines.includes('1 Mar 2026'), 'paid on 1 Mar 2026, as the billing system shows it');
  assert.ok(!lines.includes('28 Feb 2026'));
});

t.test('only a paid invoice shows a paid date', async () => {
  for (const status of ['refunded', 'cancelled', 'collections'] as const) {
    const document = invoiceWith({ status, paid_at: '2026-02-03T10:15:00Z', paid_on: '2026-02-03' });
    const lines = await drawnLines(await renderInvoicePdf(document, ISSUER));
    assert.ok(!lines.includes('Paid on'), `no "Paid on" on a ${status} invoice`);
  }
  const paid = invoiceWith({ status: 'paid', paid_at: '2026-02-03T10:15:00Z', paid_on: '2026-02-03' });
  assert.ok((await drawnLines(await renderInvoicePdf(paid, ISSUER))).includes('Paid on'));
});

const twoLevels = {
  invoiceid: 1, invoicenum: '', userid: 1, date: '2026-02-20', duedate: '2026-03-01', datepaid: '0000-00-00 00:00:00',
  subtotal: '100.00', credit: '0.00', tax: '19.00', tax2: '5.95', total: '124.95', balance: '124.95',
  taxrate: '19.000', taxrate2: '5.000', status: 'Unpaid',
  items: { item: [{ description: 'VPS', amount: '100.00', taxed: 1 }] }, transactions: '',
};

t.test('WHMCS’s two tax levels (here compound) each show with their own rate and amount', async () => {
  const lines = await drawnLines(await renderInvoicePdf(mapInvoiceDocument(InvoiceAnswer.parse(twoLevels), client as never, 'UTC'), ISSUER));
  const at = (label: string) => lines[lines.indexOf(label) + 1];
  assert.equal(at('Tax (19.00%)'), '19.00 EUR', 'the first level alone under its rate');
  assert.equal(at('Tax (5.00%)'), '5.95 EUR', 'the second level under its own rate');
  assert.equal(at('Total'), '124.95 EUR');
});

t.test('a single tax level still prints one tax row', async () => {
  const single = { ...twoLevels, tax2: '0.00', taxrate2: '0.000', total: '119.00', balance: '119.00' };
  const lines = await drawnLines(await renderInvoicePdf(mapInvoiceDocument(InvoiceAnswer.parse(single), client as never, 'UTC'), ISSUER));
  assert.deepEqual(lines.filter((line) => line.startsWith('Tax (')), ['Tax (19.00%)']);
  assert.equal(lines[lines.indexOf('Tax (19.00%)') + 1], '19.00 EUR');
});

t.test('the buyer block states the billing address and tax number WHMCS holds for the client', async () => {
  const answer = InvoiceAnswer.parse({ ...twoLevels, tax2: '0.00', taxrate2: '0.000', total: '119.00', balance: '119.00' });
  const document = mapInvoiceDocument(answer, client as never, 'UTC');
  assert.deepEqual(document.customer.address, ['Hauptstraße 1', '10115 Berlin', 'Berlin', 'Germany']);
  const lines = await drawnLines(await renderInvoicePdf(document, ISSUER));
  for (const line of ['Hauptstraße 1', '10115 Berlin', 'Germany', 'Tax ID: DE123456789']) assert.ok(lines.includes(line), line);
  const bare = mapInvoiceDocument(answer, { ...client, address1: '', city: '', state: '', postcode: '', countryname: '', tax_id: '' } as never, 'UTC');
  assert.deepEqual([bare.customer.address, bare.customer.tax_id], [[], null], 'none stated: nothing printed');
});
