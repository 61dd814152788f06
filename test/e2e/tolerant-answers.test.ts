/**
 * Issue 7, defect 2 at the HTTP level: answers that leave out fields the mapping does not need (or
 * has a documented default for) are served; one that lost rows is a 502 whose operator log line
 * names the action and the field, and the client sees no upstream text.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildTestGateway, type TestGateway } from '../helpers/gateway.js';
import { call } from '../helpers/http.js';
import { FakeWhmcs } from '../mappings/whmcs/fake-whmcs.js';
import * as answers from '../mappings/whmcs/fixtures/answers.js';
import * as variants from '../mappings/whmcs/fixtures/variants.js';

t.test('invoices from a WHMCS that omits tax2 / taxrate', async (t) => {
  const whmcs = new FakeWhmcs();
  let invoicesAnswer: object = variants.invoicesWithoutSecondTax;
  let gw: TestGateway;
  let base: string;
  let key: string;
  t.before(async () => {
    whmcs
      .answer('GetClientsDetails', answers.clientDetails)
      .answer('GetInvoices', () => invoicesAnswer)
      .answer('GetInvoice', variants.invoiceWithoutSecondTax);
    gw = await buildTestGateway({ backend: whmcs.backend() });
    base = await gw.app.listen({ host: '127.0.0.1', port: 0 });
    key = gw.keys['acme:all'] as string;
  });
  t.teardown(async () => {
    await gw.close();
    await whmcs.close();
  });

  t.test('GET /v1/billing/invoices answers 200, tax2 read as 0.00', async () => {
    const response = await call(base, 'GET', '/v1/billing/invoices', { key });
    assert.equal(response.status, 200, response.text);
    const [invoice] = response.json().data;
    assert.deepEqual(
      { id: invoice.id, subtotal: invoice.subtotal.amount, tax: invoice.tax.amount, total: invoice.total.amount },
      { id: '2', subtotal: '10.00', tax: '2.00', total: '12.00' },
    );
  });

  t.test('GET /v1/billing/invoices/{id}/pdf answers 200 with a PDF', async () => {
    const response = await call(base, 'GET', '/v1/billing/invoices/1/pdf', { key });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.headers['content-type'], 'application/pdf');
    assert.equal(response.bytes.subarray(0, 5).toString('latin1'), '%PDF-');
  });

  t.test('an answer whose rows went missing is a 502 naming GetInvoices and the field, in the log only', async () => {
    invoicesAnswer = variants.invoicesFlattened;
    const response = await call(base, 'GET', '/v1/billing/invoices', { key });
    invoicesAnswer = variants.invoicesWithoutSecondTax;
    assert.equal(response.status, 502, response.text);
    assert.equal(response.json().reason, 'upstream_error');
    assert.doesNotMatch(response.text, /GetInvoices|totalresults/);
    const line = gw.logs.find((entry) => entry.includes('upstream failure') && entry.includes('GetInvoices'));
    assert.ok(line, 'an operator log line');
    assert.match(JSON.parse(line).upstream, /WHMCS GetInvoices answer .*invoices: absent or empty although totalresults is 1/);
  });
});
