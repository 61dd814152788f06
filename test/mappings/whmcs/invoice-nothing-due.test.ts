/**
 * WHMCS's GetInvoice `balance` is `total - (SUM(amountin) - SUM(amountout))` whatever the status
 * (includes/api/getinvoice.php): a cancelled invoice (no payments) or a refunded one (the refund is
 * an amountout) reports its whole total as balance. Nothing is due on either, nor on a paid one: the
 * PDF must not print "Amount due 15.95" under a CANCELLED or REFUNDED badge (FOSSBilling's mapping
 * already shows 0.00 there).
 */
import t from 'tap';
import assert from 'node:assert/strict';
import { renderInvoicePdf } from '../../../src/pdf/invoice-pdf.js';
import { mapInvoiceDocument } from '../../../mappings/whmcs/map.js';
import { InvoiceAnswer } from '../../../mappings/whmcs/parse-invoices.js';
import { drawnLines, ISSUER } from '../../pdf/pdf-text.js';

const client = {
  firstname: 'Ada', lastname: 'L', companyname: '', email: 'a@example.com', status: 'active', currency_code: 'USD',
  address1: '', address2: '', city: '', state: '', postcode: '', countryname: '', tax_id: '',
};

const invoice = (status: string, datepaid: string) =>
  InvoiceAnswer.parse({
    invoiceid: 1, invoicenum: '', userid: 1, date: '2026-02-20', duedate: '2026-03-01', datepaid,
    subtotal: '15.95', credit: '0.00', tax: '0.00', tax2: '0.00', total: '15.95', balance: '15.95', taxrate: '0.000',
    status, items: { item: [{ description: 'VPS', amount: '15.95', taxed: 0 }] }, transactions: '',
  });

t.test('a cancelled or refunded WHMCS invoice has nothing due, though GetInvoice says balance = total', async () => {
  for (const [status, datepaid] of [['Cancelled', '0000-00-00 00:00:00'], ['Refunded', '2026-02-21 10:00:00']] as const) {
    const document = mapInvoiceDocument(invoice(status, datepaid), client as never, 'UTC');
    assert.deepEqual(document.balance, { amount: '0.00', currency: 'USD' }, status);
    // Nothing kept of either: the refund is an amountout (FOSSBilling's mapping says the same).
    assert.deepEqual(document.amount_paid, { amount: '0.00', currency: 'USD' }, `${status}: amount paid`);
    const lines = await drawnLines(await renderInvoicePdf(document, ISSUER));
    assert.equal(lines[lines.indexOf('Amount due') + 1], '0.00 USD', `${status}: Amount due`);
    assert.equal(lines[lines.indexOf('Balance due') + 1], '0.00 USD', `${status}: Balance due`);
  }
});

t.test('an unpaid or collections invoice still shows WHMCS’s balance as due', async () => {
  for (const status of ['Unpaid', 'Collections']) {
    const document = mapInvoiceDocument(invoice(status, '0000-00-00 00:00:00'), client as never, 'UTC');
    assert.deepEqual(document.balance, { amount: '15.95', currency: 'USD' }, status);
  }
});
